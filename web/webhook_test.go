package web_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"settle/ledger"
	"settle/target"
	"settle/web"
)

const hookContract = `
targets:
  - name: payments
    owner: {team: Payments team, escalation_contact: pay@example.invalid}
    documentation: {url: "https://docs.example.invalid/api", checked: 2026-11-01}
    base_url: http://127.0.0.1:1
    deadline: 1h
    create: {method: POST, path: /v1/charges}
    reference_field: metadata.settle_ref
    tenant_field: metadata.settle_tenant
    response: {id_field: id, match: [amount, metadata.settle_ref, metadata.settle_tenant]}
    webhook: {secret_env: SETTLE_TEST_SECRET, tolerance: 5m}
  - name: quiet
    owner: {team: Quiet team, escalation_contact: q@example.invalid}
    documentation: {url: "https://docs.example.invalid/q", checked: 2026-11-01}
    base_url: http://127.0.0.1:1
    deadline: 1h
    create: {method: POST, path: /v1/x}
    response: {id_field: id, match: [amount]}
`

var hookSecret = []byte("whsec-test-0123456789")

func TestWebhook_Receive(t *testing.T) {
	t.Parallel()
	set, err := target.Parse("hooks.yaml", []byte(hookContract))
	if err != nil {
		t.Fatal(err)
	}
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		s := open(t)
		e := serve(t, s, web.Config{Contracts: set, WebhookSecrets: map[string][]byte{"payments": hookSecret}})
		inbox := s.(ledger.InboxStore)
		send := func(path, sig string, body []byte) response {
			return e.do(http.MethodPost, path, "application/json", body, "Settle-Signature", sig)
		}
		body := []byte(`{"id":"evt_1","type":"charge.succeeded","data":{"id":"ch_1","amount":5}}`)
		now := time.Now()

		r := send("/webhooks/payments", target.Sign(hookSecret, now, body), body)
		if r.status != http.StatusOK || r.json(t)["duplicate"] != false {
			t.Fatalf("valid delivery: %d %s", r.status, r.body)
		}
		dup := send("/webhooks/payments", target.Sign(hookSecret, now.Add(time.Second), body), body)
		if dup.status != http.StatusOK || dup.json(t)["duplicate"] != true {
			t.Fatalf("redelivery: %d %s", dup.status, dup.body)
		}
		for name, c := range map[string]struct {
			path, sig string
			body      []byte
			status    int
		}{
			"BadSignature":   {"/webhooks/payments", target.Sign([]byte("wrong"), now, body), body, 401},
			"NoSignature":    {"/webhooks/payments", "", body, 401},
			"Garbled":        {"/webhooks/payments", "t=abc,v1=zz", body, 401},
			"TamperedBody":   {"/webhooks/payments", target.Sign(hookSecret, now, body), []byte(strings.Replace(string(body), "5", "6", 1)), 401},
			"ReplayedOld":    {"/webhooks/payments", target.Sign(hookSecret, now.Add(-10*time.Minute), body), body, 401},
			"FromTheFuture":  {"/webhooks/payments", target.Sign(hookSecret, now.Add(10*time.Minute), body), body, 401},
			"UnknownTarget":  {"/webhooks/nowhere", target.Sign(hookSecret, now, body), body, 404},
			"NoWebhookBlock": {"/webhooks/quiet", target.Sign(hookSecret, now, body), body, 404},
			"TooLarge":       {"/webhooks/payments", "t=1,v1=00", []byte(`{"pad":"` + strings.Repeat("x", web.WebhookBodyLimit) + `"}`), 413},
		} {
			t.Run(name, func(t *testing.T) {
				r := send(c.path, c.sig, c.body)
				if r.status != c.status {
					t.Fatalf("status %d, want %d: %s", r.status, c.status, r.body)
				}
			})
		}
		// Only the one valid delivery was stored.
		ds, err := inbox.ClaimDeliveries(context.Background(), 100, time.Minute)
		if err != nil || len(ds) != 1 || string(ds[0].Body) != string(body) {
			t.Fatalf("stored deliveries: %d, %v", len(ds), err)
		}
		m := e.do(http.MethodGet, "/metrics", "", nil)
		for _, line := range []string{
			`settle_webhook_deliveries_total{result="accepted",target="payments"} 1`,
			`settle_webhook_deliveries_total{result="duplicate",target="payments"} 1`,
			`settle_webhook_deliveries_total{result="expired_signature",target="payments"} 2`,
		} {
			if !strings.Contains(string(m.body), line) {
				t.Fatalf("metrics lack %s:\n%s", line, m.body)
			}
		}
		if n := counter(string(m.body), `settle_webhook_deliveries_total{result="bad_signature",target="payments"}`); n < 3 {
			t.Fatalf("bad signatures counted %d", n)
		}
	})
}

func counter(text, series string) int {
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return 0
}
