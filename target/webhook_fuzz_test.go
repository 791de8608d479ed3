package target

import (
	"testing"
	"time"
)

// FuzzWebhook feeds arbitrary signature headers and bodies to the webhook
// parser: verification must never panic and must accept only a header that
// signs exactly this body with this secret; reading the event must never
// panic and must return an object only when it is a JSON object.
func FuzzWebhook(f *testing.F) {
	now := time.Unix(1_900_000_000, 0)
	secret := []byte("fuzz-secret")
	body := []byte(`{"id":"evt_1","data":{"id":"ch_1","metadata":{"settle_ref":"r","settle_tenant":"acme"}}}`)
	f.Add(Sign(secret, now, body), body)
	f.Add("t=1900000000,v1=00", []byte(`{"data":[]}`))
	f.Add("v1=zz,t=,", []byte(`{"id":5,"data":{"id":{"x":1}}}`))
	f.Add("", []byte(`not json`))
	c := &Contract{Name: "p", ReferenceField: "metadata.settle_ref", TenantField: "metadata.settle_tenant",
		Response: Response{IDField: "id", Match: []MatchField{{Field: "metadata.settle_ref"}}},
		Webhook:  &Webhook{Tolerance: time.Minute, SignatureHeader: "S", ObjectField: "data", EventIDField: "id"}}
	f.Fuzz(func(t *testing.T, header string, b []byte) {
		if err := Verify(header, b, secret, time.Minute, now); err == nil && header != Sign(secret, now, b) {
			// Another header may only verify if it carries the right MAC
			// for b and a time within tolerance.
			if Verify(header, append([]byte("x"), b...), secret, time.Minute, now) == nil {
				t.Fatal("a signature verified for two different bodies")
			}
		}
		id, obj := c.EventParts(b)
		if obj != nil {
			if _, err := decodeJSON(obj); err != nil {
				t.Fatalf("object %q is not JSON", obj)
			}
			ref, tenant := c.References(obj)
			_, _, _ = id, ref, tenant
		}
	})
}
