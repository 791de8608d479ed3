package reconciler_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

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

// A declined card against the Stripe-shaped target: the 402 card_error
// carries the PaymentIntent the request created, in requires_payment_method.
// The operation is "Not applied" (FAILED_TERMINAL, the 402 row is
// documented) with that intent's id as its remote reference and evidence,
// on both stores, and the duplicate auditor, which finds the declined
// intent by search, calls it neither a phantom nor a duplicate nor a loss.
func TestReconciler_StripeDeclineKeepsTheIntent(t *testing.T) {
	t.Parallel()
	const key = "sk_test_reconciler_decline_4eC39HqLyjW"
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Flavor: sim.FlavorStripe, APIKey: key}, nil)
		secrets, err := target.ReadSecrets(r.set, func(string) string { return key })
		if err != nil {
			t.Fatal(err)
		}
		r.client = target.NewClient(target.ClientOptions{Secrets: secrets})
		op, _, err := r.store.Create(r.ctx, ledger.NewOperation{
			Tenant: "acme", Type: "charge", IntentRef: "order-declined", Target: r.c.Name,
			Payload:     []byte(`{"amount":900,"currency":"EUR","payment_method":"` + sim.PMDeclined + `","confirm":true}`),
			RetryWindow: r.c.RetryWindow(), Bind: r.c.Bind,
		})
		if err != nil {
			t.Fatal(err)
		}
		r.runUntil("FAILED_TERMINAL", r.isIn(op, ledger.FailedTerminal), r.executor(r.store))

		objs := r.sim.Objects()
		if len(objs) != 1 || objs[0].Reference != op.RemoteKey || objs[0].Status != sim.StatusRequiresPaymentMethod {
			t.Fatalf("the simulator holds %+v; want one declined intent", objs)
		}
		got := r.get(op)
		if got.RemoteRef != objs[0].ID {
			t.Fatalf("remote ref %q; want the declined intent %s", got.RemoteRef, objs[0].ID)
		}
		ev := r.evidence(r.lastEvent(op))
		if ev["status"] != float64(402) || ev["remote_id"] != objs[0].ID || ev["object_status"] != sim.StatusRequiresPaymentMethod ||
			!strings.HasSuffix(fmt.Sprint(ev["documentation"]), "#declines") {
			t.Fatalf("evidence %v", ev)
		}

		rep := r.audit(r.auditor(prometheus.NewRegistry()))
		if rep.Checked != 1 || rep.Phantoms != 0 || rep.Duplicates != 0 || rep.Losses != 0 || len(rep.Findings) != 0 {
			t.Fatalf("audit of the declined intent: %+v", rep)
		}
		if r.get(op).State != ledger.FailedTerminal {
			t.Fatalf("after the audit: %s", r.get(op).State)
		}
	})
}

// A declined card whose 402 answer was lost (the connection dropped after
// Stripe committed the intent): the reconciler's same-key replay earns the
// saved 402, marked Idempotent-Replayed, carrying this operation's intent.
// That is the first send's own answer, so it settles the operation "Not
// applied" at once, with the intent as the remote reference — as the
// first send would have — rather than going on to a lookup.
func TestReconciler_StripeReplayedDeclineIsNotApplied(t *testing.T) {
	t.Parallel()
	const key = "sk_test_reconciler_replay_decline_9Qw"
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		clk := ledgertest.NewClock()
		r := newRigAt(t, h, sim.Config{Flavor: sim.FlavorStripe, APIKey: key}, nil, clk.Now)
		secrets, err := target.ReadSecrets(r.set, func(string) string { return key })
		if err != nil {
			t.Fatal(err)
		}
		r.client = target.NewClient(target.ClientOptions{Secrets: secrets})
		deadline := clk.Now().Add(r.c.Deadline)
		op, _, err := r.store.Create(r.ctx, ledger.NewOperation{
			Tenant: "acme", Type: "charge", IntentRef: "order-replayed-decline", Target: r.c.Name,
			Payload:     []byte(`{"amount":900,"currency":"EUR","payment_method":"` + sim.PMDeclined + `","confirm":true}`),
			RetryWindow: r.c.RetryWindow(), Deadline: &deadline, Bind: r.c.Bind,
		})
		if err != nil {
			t.Fatal(err)
		}
		r.sim.Script(sim.DropAfterCommit) // declined and saved, the 402 never arrives
		r.runUntil("UNKNOWN", r.isIn(op, ledger.Unknown), r.executor(r.store))

		rec := r.reconciler()
		rec.Now = clk.Now
		if n := r.reconcileOnce(rec); n != 1 {
			t.Fatalf("the round leased %d", n)
		}
		objs := r.sim.Objects()
		if len(objs) != 1 || objs[0].Status != sim.StatusRequiresPaymentMethod {
			t.Fatalf("the simulator holds %+v; want one declined intent", objs)
		}
		got, e := r.get(op), r.lastEvent(op)
		ev := r.evidence(e)
		if got.State != ledger.FailedTerminal || got.RemoteRef != objs[0].ID {
			t.Fatalf("after the replay: %s %q remote ref %q; want FAILED_TERMINAL with %s", got.State, got.Reason, got.RemoteRef, objs[0].ID)
		}
		if ev["status"] != float64(402) || ev["replayed"] != true || ev["via"] != "same-key replay" || ev["remote_id"] != objs[0].ID {
			t.Fatalf("evidence %v", ev)
		}
	})
}
