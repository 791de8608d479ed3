package web_test

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"

	"settle/ledger"
	"settle/web"
)

// An owner reading an operation whose payload retention has redacted is
// told so, with the fingerprint that still checks a repeated registration.
func TestConsole_RedactedPayload(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{})
		ctx := context.Background()
		op := c.create("acme", "inv-3003")
		held, err := c.store.Claim(ctx, "acme", op.ID, op.PayloadHash, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.store.Record(ctx, ledger.Outcome{Tenant: "acme", OperationID: op.ID, Fence: held.Fence,
			From: ledger.InFlight, To: ledger.Succeeded, RemoteRef: "ch_3003", Actor: ledger.ActorExecutor}); err != nil {
			t.Fatal(err)
		}
		rs, ok := c.store.(ledger.RetentionStore)
		if !ok {
			t.Fatal("store does not implement ledger.RetentionStore")
		}
		if n, err := rs.RedactPayloads(ctx, time.Now().Add(time.Hour), 10); err != nil || n != 1 {
			t.Fatalf("redact: %d %v", n, err)
		}
		r := c.as("owner").get(c.opPath(op))
		if r.status != http.StatusOK || !testid(r.body, "payload-note", "The request was removed under the retention rule") ||
			testid(r.body, "payload", "") || bytes.Contains(r.body, []byte(secretField)) {
			t.Fatalf("owner's page: %d %s", r.status, r.body)
		}
	})
}
