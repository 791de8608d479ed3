package web_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"settle/auth/oidctest"
	"settle/ledger"
	"settle/ledger/storetest"
	"settle/web"
)

// TestConsole_ReplayOfferedOnlyInsideTheWindow: in headless Chromium, an
// owner is offered "authorise one same-key replay" on a class A target's
// escalation while its window (less the timeout and the replay margin) is
// open, and not once it has closed.
func TestConsole_ReplayOfferedOnlyInsideTheWindow(t *testing.T) {
	t.Parallel()
	s := storetest.Postgres().New(t, time.Now).(store)
	c, prov := oidcConsole(t, s, web.Config{Contracts: testContracts(t)}, `  - group: payments-owners
    role: owner
    tenants: [acme]
    targets: [payments]
`, oidctest.User{Subject: "ada-1", Name: "Ada Owner", Email: "ada@example.test", Groups: []string{"payments-owners"}})
	open := c.escalated("acme")
	closed := escalatedWithin(t, c, "acme", "inv-short", time.Second)

	b, check := visit(t)
	prov.SignInAs(t, "ada-1")
	if st := b.Navigate(c.base + escPath(open)); st != http.StatusOK {
		t.Fatalf("escalation, window open: %d", st)
	}
	if n := b.Count(`[data-testid="kind-replay"]`); n != 1 {
		t.Fatalf("inside the window the replay is offered %d times, want once", n)
	}
	check("replay-offered")
	if st := b.Navigate(c.base + escPath(closed)); st != http.StatusOK {
		t.Fatalf("escalation, window closed: %d", st)
	}
	if n := b.Count(`[data-testid="kind-replay"]`); n != 0 {
		t.Fatal("a replay is offered outside the window")
	}
	if got := b.TextByTestID("answer-replay-text"); len(got) < 3 || got[:3] != "No:" {
		t.Fatalf("the window question answers %q", got)
	}
	check("replay-not-offered")
}

// escalatedWithin registers an operation of tenant whose same-key window
// is window long, sends it once and escalates it.
func escalatedWithin(t *testing.T, c *console, tenant, intent string, window time.Duration) ledger.Operation {
	t.Helper()
	ctx := context.Background()
	op, _, err := c.store.Create(ctx, ledger.NewOperation{Tenant: tenant, Type: "charge", IntentRef: intent,
		Target: "payments", Payload: []byte(`{"amount":100}`), RetryWindow: window})
	if err != nil {
		t.Fatal(err)
	}
	held, err := c.store.Claim(ctx, tenant, op.ID, op.PayloadHash, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	op, err = c.store.Record(ctx, ledger.Outcome{Tenant: tenant, OperationID: op.ID, Fence: held.Fence,
		From: ledger.InFlight, To: ledger.Escalated, Actor: ledger.ActorExecutor, Reason: "answer lost"})
	if err != nil {
		t.Fatal(err)
	}
	return op
}
