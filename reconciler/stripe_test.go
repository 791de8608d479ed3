package reconciler_test

import (
	"slices"
	"testing"
	"time"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/storetest"
	"settle/target"
	"settle/target/sim"
)

// A same-key replay that a Stripe-shaped target refuses with 400
// idempotency_error — its parameters differ from the first send's, here
// because the tenant's descriptor, written into the body at send time,
// changed in between — did nothing, and says nothing about the first send,
// which committed. It never becomes "Not applied": the replays end and the
// lookup finds the one intent, which settles the operation.
func TestReconciler_StripeIdempotencyErrorIsNeverNotApplied(t *testing.T) {
	t.Parallel()
	const key = "sk_test_reconciler_51HqLyjWDarjtT1zdp7dc"
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		clk := ledgertest.NewClock()
		r := newRigAt(t, h, sim.Config{Flavor: sim.FlavorStripe, APIKey: key}, func(c *target.Contract) {
			c.BodyFields = []target.BodyField{{Path: "description", Value: "{tenant.descriptor}"}}
		}, clk.Now)
		secrets, err := target.ReadSecrets(r.set, func(string) string { return key })
		if err != nil {
			t.Fatal(err)
		}
		params := &tenantParams{m: map[string]map[string]string{"acme": {"account": "acct_1Acme", "descriptor": "first"}}}
		r.client = target.NewClient(target.ClientOptions{Secrets: secrets, Params: params})

		deadline := clk.Now().Add(r.c.Deadline)
		op, _, err := r.store.Create(r.ctx, ledger.NewOperation{
			Tenant: "acme", Type: "charge", IntentRef: "order-1", Target: r.c.Name,
			Payload:     []byte(`{"amount":700,"currency":"EUR","payment_method":"pm_card_visa","confirm":true}`),
			RetryWindow: r.c.RetryWindow(), Deadline: &deadline, Bind: r.c.Bind,
		})
		if err != nil {
			t.Fatal(err)
		}
		r.sim.Script(sim.FailAfterCommit) // committed, and the 500 saved for replays
		r.runUntil("UNKNOWN", r.isIn(op, ledger.Unknown), r.executor(r.store))
		if n := r.remote(op); n != 1 {
			t.Fatalf("%d intents after the first send; want 1", n)
		}

		params.mu.Lock()
		params.m["acme"]["descriptor"] = "second"
		params.mu.Unlock()
		rec := r.reconciler()
		rec.Now = clk.Now
		if n := r.reconcileOnce(rec); n != 1 {
			t.Fatalf("first round leased %d", n)
		}
		e := r.lastEvent(op)
		if ev := r.evidence(e); r.get(op).State != ledger.Unknown || ev["status"] != float64(400) || ev["via"] != "same-key replay" {
			t.Fatalf("after the refused replay: %s %q evidence %v", r.get(op).State, e.Reason, ev)
		}

		clk.Advance(time.Second)
		if n := r.reconcileOnce(rec); n != 1 {
			t.Fatalf("second round leased %d", n)
		}
		got := r.get(op)
		if got.State != ledger.Succeeded || r.remote(op) != 1 || slices.Contains(r.history(op), ledger.FailedTerminal) {
			t.Fatalf("after the lookup: %s %q, history %v, %d intents", got.State, got.Reason, r.history(op), r.remote(op))
		}
	})
}
