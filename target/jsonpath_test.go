package target

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"settle/ledger"
)

func TestInjectFields(t *testing.T) {
	ref := map[string]string{"metadata.settle_ref": "r1", "metadata.settle_tenant": "acme"}
	tests := []struct {
		name    string
		payload string
		fields  map[string]string
		want    string // "" when an error is expected
		err     string
	}{
		{"creates nested objects", `{"amount":100}`, ref, `{"amount":100,"metadata":{"settle_ref":"r1","settle_tenant":"acme"}}`, ""},
		{"keeps existing siblings", `{"metadata":{"order":"o-9"}}`, map[string]string{"metadata.settle_ref": "r1"}, `{"metadata":{"order":"o-9","settle_ref":"r1"}}`, ""},
		{"deep path", `{}`, map[string]string{"a.b.c": "x"}, `{"a":{"b":{"c":"x"}}}`, ""},
		{"same value is fine", `{"metadata":{"settle_ref":"r1"}}`, map[string]string{"metadata.settle_ref": "r1"}, `{"metadata":{"settle_ref":"r1"}}`, ""},
		{"numbers kept exact, HTML not escaped", `{"amount":12345678901234567890.10,"note":"<&>"}`, map[string]string{"ref": "r"},
			`{"amount":12345678901234567890.10,"note":"<&>","ref":"r"}`, ""},
		{"no fields", `{"a":1}`, nil, `{"a":1}`, ""},
		{"conflicting value", `{"metadata":{"settle_ref":"other"}}`, map[string]string{"metadata.settle_ref": "r1"}, "", "ledger: invalid: payload.metadata.settle_ref is already set, but settle writes its own value there; leave it out of the payload"},
		{"same text but not a string", `{"ref":1}`, map[string]string{"ref": "1"}, "", "ledger: invalid: payload.ref is already set, but settle writes its own value there; leave it out of the payload"},
		{"crosses a string", `{"metadata":"x"}`, map[string]string{"metadata.settle_ref": "r1"}, "", "ledger: invalid: payload.metadata is a string, not an object, so settle cannot write its own value at metadata.settle_ref; send metadata as an object or leave it out"},
		{"crosses an array", `{"a":{"b":[1]}}`, map[string]string{"a.b.c": "r1"}, "", "ledger: invalid: payload.a.b is an array, not an object, so settle cannot write its own value at a.b.c; send a.b as an object or leave it out"},
		{"paths collide", `{}`, map[string]string{"a": "x", "a.b": "y"}, "", "ledger: invalid: payload.a is a string, not an object, so settle cannot write its own value at a.b; send a as an object or leave it out"},
		{"payload is an array", `[1,2]`, ref, "", "inject fields: payload is not a JSON object"},
		{"payload is null", `null`, ref, "", "inject fields: payload is not a JSON object"},
		{"payload is not JSON", `{"a":`, ref, "", "inject fields: payload: not valid JSON"},
		{"trailing data", `{} {}`, ref, "", "inject fields: payload: not valid JSON: data after the value"},
		{"bad path", `{}`, map[string]string{"a..b": "x"}, "", `inject fields: "a..b" is not a dotted field path`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := InjectFields([]byte(tt.payload), tt.fields)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("err = %v; want %q", err, tt.err)
				}
				if strings.Contains(err.Error(), "other") {
					t.Error("error quotes a payload value")
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("InjectFields = %s, %v; want %s", got, err, tt.want)
			}
		})
	}
}

func TestContract_RemoteID(t *testing.T) {
	c := parseOne(t, "    response: {id_field: data.id, match: [amount]}\n", "response")
	tests := []struct {
		name, body, want, err string
	}{
		{"string", `{"data":{"id":"ch_1"}}`, "ch_1", ""},
		{"number", `{"data":{"id":12345678901234567890}}`, "12345678901234567890", ""},
		{"missing", `{"data":{}}`, "", "remote id: data.id is missing"},
		{"parent not an object", `{"data":"ch_1"}`, "", "remote id: data.id is missing"},
		{"empty string", `{"data":{"id":""}}`, "", "remote id: data.id is not a non-empty string or a number"},
		{"null", `{"data":{"id":null}}`, "", "remote id: data.id is not a non-empty string or a number"},
		{"object", `{"data":{"id":{"v":1}}}`, "", "remote id: data.id is not a non-empty string or a number"},
		{"not JSON", `<html>`, "", "remote id: not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := c.RemoteID([]byte(tt.body))
			if got != tt.want || (err == nil) != (tt.err == "") || (err != nil && err.Error() != tt.err) {
				t.Errorf("RemoteID = %q, %v; want %q, %q", got, err, tt.want, tt.err)
			}
		})
	}
}

// The statuses table: listed values mean what their row says, an unlisted
// value is pending (the safe reading, and never repeated as evidence), and
// a body that cannot tell is an error, never completion or failure.
func TestContract_ObjectStatus(t *testing.T) {
	const doc = "https://docs.example.com/status"
	c := parseOne(t, `    response:
      id_field: id
      match: [amount]
      status_field: charge.status
      statuses:
        - {value: succeeded, outcome: succeeded}
        - {value: paid, outcome: succeeded}
        - {value: failed, outcome: failed, documentation: "`+doc+`"}
        - {value: processing, outcome: pending, documentation: "`+doc+`"}
`, "response")
	tests := []struct {
		name, body string
		want       ObjectState
		err        string
	}{
		{"succeeded", `{"id":"ch_1","charge":{"status":"succeeded"}}`, ObjectState{ObjectSucceeded, "succeeded", ""}, ""},
		{"another succeeded value", `{"charge":{"status":"paid"}}`, ObjectState{ObjectSucceeded, "paid", ""}, ""},
		{"failed", `{"charge":{"status":"failed"}}`, ObjectState{ObjectFailed, "failed", doc}, ""},
		{"listed pending", `{"charge":{"status":"processing"}}`, ObjectState{ObjectPending, "processing", doc}, ""},
		{"unlisted is pending", `{"id":"ch_1","charge":{"status":"pending"}}`, ObjectState{Outcome: ObjectPending}, ""},
		{"case matters", `{"charge":{"status":"Failed"}}`, ObjectState{Outcome: ObjectPending}, ""},
		{"missing", `{"id":"ch_1","charge":{}}`, ObjectState{}, "object status: charge.status is missing"},
		{"parent not an object", `{"charge":"succeeded"}`, ObjectState{}, "object status: charge.status is missing"},
		{"null", `{"charge":{"status":null}}`, ObjectState{}, "object status: charge.status is not a string"},
		{"number", `{"charge":{"status":1}}`, ObjectState{}, "object status: charge.status is not a string"},
		{"array body", `[{"charge":{"status":"succeeded"}}]`, ObjectState{}, "object status: the body is not a JSON object"},
		{"not JSON", `<html>`, ObjectState{}, "object status: not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := c.ObjectStatus([]byte(tt.body))
			if got != tt.want || (err == nil) != (tt.err == "") || (err != nil && err.Error() != tt.err) {
				t.Errorf("ObjectStatus = %+v, %v; want %+v, %q", got, err, tt.want, tt.err)
			}
			done, derr := c.Completed([]byte(tt.body))
			if done != (tt.want.Outcome == ObjectSucceeded) || (derr == nil) != (err == nil) {
				t.Errorf("Completed = %v, %v; want %v", done, derr, tt.want.Outcome == ObjectSucceeded)
			}
		})
	}

	// No status documented: any object is completed, anything else is not.
	plain := parseOne(t, "")
	for body, want := range map[string]bool{`{"id":"ch_1","status":"failed"}`: true, `{}`: true, `[]`: false, `oops`: false} {
		if got, err := plain.Completed([]byte(body)); got != want || (err == nil) != want {
			t.Errorf("no status_field: Completed(%s) = %v, %v; want %v", body, got, err, want)
		}
	}
}

func TestContract_ExpectedVersion(t *testing.T) {
	c := parseOne(t, "    conditional_update: {header: If-Match, version_field: meta.version}\n")
	tests := []struct {
		name, payload, want string
		ok                  bool
	}{
		{"string", `{"meta":{"version":"\"7\""}}`, `"7"`, true},
		{"number as written", `{"meta":{"version":12345678901234567890.0}}`, "12345678901234567890.0", true},
		{"missing", `{"meta":{}}`, "", false},
		{"empty string", `{"meta":{"version":""}}`, "", false},
		{"null", `{"meta":{"version":null}}`, "", false},
		{"object", `{"meta":{"version":{"v":1}}}`, "", false},
		{"not JSON", `{"meta":`, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, ok := c.ExpectedVersion([]byte(tt.payload)); got != tt.want || ok != tt.ok {
				t.Errorf("ExpectedVersion = %q, %v; want %q, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
	if v, ok := parseOne(t, "    conditional_update: {header: If-Match}\n").ExpectedVersion([]byte(`{"meta":{"version":"1"}}`)); ok {
		t.Errorf("no version_field: ExpectedVersion = %q, true", v)
	}
}

func TestContract_Mismatches(t *testing.T) {
	c := parseOne(t, `    reference_field: metadata.ref
    response: {id_field: id, match: [amount, currency, metadata.ref, items]}
`, "response")
	approved := `{"amount":1000,"currency":"EUR","metadata":{"ref":"r1"},"items":[{"sku":"a","n":1}]}`
	tests := []struct {
		name, approved, remote string
		want                   []string
	}{
		{"all agree, extra remote fields ignored", approved, `{"id":"x","amount":1000,"currency":"EUR","metadata":{"ref":"r1","other":1},"items":[{"n":1,"sku":"a"}]}`, nil},
		{"numbers by value", approved, `{"amount":1000.00,"currency":"EUR","metadata":{"ref":"r1"},"items":[{"sku":"a","n":1e0}]}`, nil},
		{"different amount", approved, `{"amount":1001,"currency":"EUR","metadata":{"ref":"r1"},"items":[{"sku":"a","n":1}]}`, []string{"amount"}},
		{"number against string", approved, `{"amount":"1000","currency":"EUR","metadata":{"ref":"r1"},"items":[{"sku":"a","n":1}]}`, []string{"amount"}},
		{"missing remotely", approved, `{"amount":1000,"currency":"EUR","items":[{"sku":"a","n":1}]}`, []string{"metadata.ref"}},
		{"missing in approved", `{"currency":"EUR","metadata":{"ref":"r1"},"items":[]}`, `{"amount":1000,"currency":"EUR","metadata":{"ref":"r1"},"items":[]}`, []string{"amount"}},
		{"null is not absent but not equal", approved, `{"amount":null,"currency":"EUR","metadata":{"ref":"r1"},"items":[{"sku":"a","n":1}]}`, []string{"amount"}},
		{"array order matters", approved, `{"amount":1000,"currency":"EUR","metadata":{"ref":"r1"},"items":[{"sku":"a","n":1},{"sku":"b"}]}`, []string{"items"}},
		// A number that an IEEE-754 double cannot hold exactly is never
		// evidence of a match, even written identically on both sides: the
		// approved payload can never hold one (canonicalisation refuses it),
		// so such a remote number means something else changed it.
		{"identical lossy numbers do not confirm", `{"amount":9007199254740993}`, `{"amount":9007199254740993}`, []string{"amount", "currency", "metadata.ref", "items"}},
		{"lossy remote number", `{"amount":9007199254740992}`, `{"amount":9007199254740993}`, []string{"amount", "currency", "metadata.ref", "items"}},
		{"remote number rounding to the approved double", `{"amount":0.1}`, `{"amount":0.1000000000000000055511151231257827}`, []string{"amount", "currency", "metadata.ref", "items"}},
		{"exact big integers by value", `{"amount":9007199254740992}`, `{"amount":9.007199254740992e15}`, []string{"currency", "metadata.ref", "items"}},
		{"identical huge exponents do not confirm", `{"amount":1e999999999}`, `{"amount":1e999999999}`, []string{"amount", "currency", "metadata.ref", "items"}},
		{"huge exponents are never compared by value", `{"amount":1e999999999}`, `{"amount":10e999999998}`, []string{"amount", "currency", "metadata.ref", "items"}},
		{"underflow does not confirm zero", `{"amount":0}`, `{"amount":1e-400}`, []string{"amount", "currency", "metadata.ref", "items"}},
		{"remote not JSON", approved, `oops`, []string{"amount", "currency", "metadata.ref", "items"}},
		{"remote not an object", approved, `[1]`, []string{"amount", "currency", "metadata.ref", "items"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MismatchFields(c.Mismatches([]byte(tt.approved), []byte(tt.remote))); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Mismatches = %q; want %q", got, tt.want)
			}
		})
	}
}

func TestContract_Results(t *testing.T) {
	list := parseOne(t, `    reference_field: ref
    lookup: {path: "/v1/things?ref={reference}", results_field: page.data}
    response: {id_field: id, match: [ref]}
`, "response")
	one := parseOne(t, `    lookup: {path: "/v1/things/{remote_ref}"}`+"\n")
	tests := []struct {
		name string
		c    *Contract
		body string
		want []string
		err  string
	}{
		{"array", list, `{"page":{"data":[{"id":"a"},{"id":"b"}]}}`, []string{`{"id":"a"}`, `{"id":"b"}`}, ""},
		{"empty array is zero results", list, `{"page":{"data":[]}}`, []string{}, ""},
		{"missing field is an error, not absence", list, `{"page":{}}`, nil, "lookup results: page.data is missing"},
		{"null is an error, not absence", list, `{"page":{"data":null}}`, nil, "lookup results: page.data is not an array"},
		{"not an array", list, `{"page":{"data":{"id":"a"}}}`, nil, "lookup results: page.data is not an array"},
		{"element not an object", list, `{"page":{"data":[{"id":"a"},"b"]}}`, nil, "lookup results: page.data[1] is not an object"},
		{"parent not an object", list, `{"page":[]}`, nil, "lookup results: page.data: not inside a JSON object"},
		{"not JSON", list, `<html>`, nil, "lookup results: page.data: not inside a JSON object"},
		{"single object", one, ` {"id":"a"} `, []string{`{"id":"a"}`}, ""},
		{"single body not an object", one, `[{"id":"a"}]`, nil, "lookup results: the body is not a JSON object"},
		{"no lookup", parseOne(t, ""), `{}`, nil, "lookup results: target t1 has no lookup"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.c.Results([]byte(tt.body))
			if (err == nil) != (tt.err == "") || (err != nil && err.Error() != tt.err) {
				t.Fatalf("err = %v; want %q", err, tt.err)
			}
			if tt.err != "" {
				return
			}
			strs := make([]string, len(got))
			for i, r := range got {
				strs[i] = string(r)
			}
			if !reflect.DeepEqual(strs, tt.want) {
				t.Errorf("Results = %q; want %q", strs, tt.want)
			}
			for _, r := range got {
				if !json.Valid(r) {
					t.Errorf("result %s is not valid JSON", r)
				}
			}
		})
	}
}

// A payload that clashes with the fields the contract has settle write is
// the client's to fix: EInvalid naming the field, the clash and the
// contract's key, never quoting the payload's value.
func TestContract_BindClash(t *testing.T) {
	c := parseOne(t, `    reference_field: metadata.settle_ref
    tenant_field: account.tenant
    response: {id_field: id, match: [amount, metadata.settle_ref, account.tenant]}
`, "response")
	for payload, want := range map[string]string{
		`{"metadata":{"settle_ref":"mine"}}`: "payload.metadata.settle_ref is already set, but settle writes the operation's reference (target t1, reference_field) there",
		`{"account":{"tenant":"globex"}}`:    "payload.account.tenant is already set, but settle writes the tenant (target t1, tenant_field) there",
		`{"metadata":"secret note"}`:         "payload.metadata is a string, not an object, so settle cannot write the operation's reference (target t1, reference_field) at metadata.settle_ref",
		`{"account":[1]}`:                    "payload.account is an array, not an object",
		`{"account":true}`:                   "payload.account is a boolean, not an object",
	} {
		_, err := c.Bind([]byte(payload), "key-1", "acme")
		msg := ledger.ErrorMessage(err)
		if ledger.ErrorCode(err) != ledger.EInvalid || !strings.HasPrefix(msg, want) {
			t.Errorf("Bind(%s) = %v, want invalid starting %q", payload, err, want)
		}
		for _, leak := range []string{"mine", "globex", "secret"} {
			if strings.Contains(msg, leak) {
				t.Errorf("message %q quotes the payload", msg)
			}
		}
	}
	got, err := c.Bind([]byte(`{"amount":1,"metadata":{"settle_ref":"key-1"}}`), "key-1", "acme")
	if err != nil || string(got) != `{"account":{"tenant":"acme"},"amount":1,"metadata":{"settle_ref":"key-1"}}` {
		t.Fatalf("Bind with the same reference already set: %s, %v", got, err)
	}
}

func TestContract_Rebind(t *testing.T) {
	c := parseOne(t, `    reference_field: metadata.settle_ref
    tenant_field: account.tenant
    response: {id_field: id, match: [amount, metadata.settle_ref, account.tenant]}
`, "response")
	bound, err := c.Bind([]byte(`{"amount":1}`), "key-1", "acme")
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Rebind(bound, "key-2", "acme")
	if err != nil || string(got) != `{"account":{"tenant":"acme"},"amount":1,"metadata":{"settle_ref":"key-2"}}` {
		t.Fatalf("Rebind = %s, %v; want the reference replaced, all else kept", got, err)
	}
	if again, _ := c.Rebind(bound, "key-2", "acme"); string(again) != string(got) {
		t.Errorf("Rebind is not deterministic: %s then %s", got, again)
	}
	if ref, tenant := c.References(got); ref != "key-2" || tenant != "acme" {
		t.Errorf("References(rebound) = %q, %q", ref, tenant)
	}
	// Bind still refuses what Rebind replaces.
	if _, err := c.Bind(bound, "key-2", "acme"); ledger.ErrorCode(err) != ledger.EInvalid {
		t.Errorf("Bind over another reference = %v, want invalid", err)
	}
	// Only the reference is replaced: another tenant, or a reference that is
	// not a string, is refused as Bind refuses it.
	for _, payload := range []string{
		`{"account":{"tenant":"globex"},"metadata":{"settle_ref":"key-1"}}`,
		`{"metadata":{"settle_ref":7}}`,
	} {
		if _, err := c.Rebind([]byte(payload), "key-2", "acme"); ledger.ErrorCode(err) != ledger.EInvalid {
			t.Errorf("Rebind(%s) = %v, want invalid", payload, err)
		}
	}
	// A payload without a reference gets one, as from Bind.
	if got, err := c.Rebind([]byte(`{"amount":1}`), "key-3", "acme"); err != nil || !strings.Contains(string(got), `"settle_ref":"key-3"`) {
		t.Errorf("Rebind without a reference = %s, %v", got, err)
	}
}
