package web_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
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

// After retention redacted its payload, a repeated POST of the intent is
// still judged by the stored hash: the same payload answers 200 with the
// operation, another 409 payload_conflict; nothing is created or sent.
func TestAPI_CreateAfterRedaction(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		e := serve(t, open(t), web.Config{})
		first := e.post(charge)
		if first.status != http.StatusCreated {
			t.Fatalf("POST: %d %s", first.status, first.body)
		}
		id := first.json(t)["operation_id"].(string)
		ctx := context.Background()
		got, err := e.store.Get(ctx, "acme", id)
		if err != nil {
			t.Fatal(err)
		}
		op, err := e.store.Claim(ctx, "acme", id, got.PayloadHash, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.store.Record(ctx, ledger.Outcome{Tenant: "acme", OperationID: id, Fence: op.Fence,
			From: ledger.InFlight, To: ledger.Succeeded, RemoteRef: "ch_1", Actor: ledger.ActorExecutor}); err != nil {
			t.Fatal(err)
		}
		if n, err := e.store.(ledger.RetentionStore).RedactPayloads(ctx, time.Now().Add(time.Hour), 10); err != nil || n != 1 {
			t.Fatalf("redact: %d %v", n, err)
		}
		same := e.post(charge)
		if same.status != http.StatusOK || same.json(t)["operation_id"] != id || same.json(t)["state"] != "SUCCEEDED" {
			t.Fatalf("same intent, same payload after redaction: %d %s", same.status, same.body)
		}
		wantError(t, e.post(strings.Replace(charge, "5000", "4000", 1)), http.StatusConflict, "payload_conflict")
		if page, err := e.store.List(ctx, ledger.ListFilter{Tenant: "acme", Limit: 10}); err != nil || len(page.Operations) != 1 {
			t.Fatalf("operations: %+v %v", page, err)
		}
	})
}
