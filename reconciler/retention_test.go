package reconciler_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/storetest"
	"settle/reconciler"
	"settle/target/sim"
)

// A webhook about an operation whose payload retention has redacted is
// still matched by its reference and tenant: the confirming event is
// consistent, another object for it is still a possible duplicate.
func TestRetention_RedactedOperationStillMatchesItsWebhook(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newHookRig(t, h, sim.Config{Class: "A"})
		op := r.create("acme", "order-1", 500)
		r.runUntil("SUCCEEDED", r.isIn(op, ledger.Succeeded), r.executor(r.store))
		op = r.get(op)
		rs := r.store.(ledger.RetentionStore)
		if n, err := rs.RedactPayloads(r.ctx, time.Now().Add(time.Hour), 10); err != nil || n != 1 {
			t.Fatalf("redact: %d %v", n, err)
		}
		if !r.get(op).Redacted() {
			t.Fatal("not redacted")
		}
		// Drop what the simulator itself delivered, to judge only these two.
		for {
			ds, err := r.inbox.ClaimDeliveries(r.ctx, 100, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			if len(ds) == 0 {
				break
			}
			for _, d := range ds {
				if err := r.inbox.FinishDelivery(r.ctx, d.ID, "test: skipped"); err != nil {
					t.Fatal(err)
				}
			}
		}
		r.post("evt_same", chargeObject(op.RemoteRef, op.RemoteKey, "acme", 500, "succeeded"))
		r.post("evt_other", chargeObject("ch_other", op.RemoteKey, "acme", 500, "succeeded"))
		p, reg := r.countedProcessor()
		got := r.processEach(p, reg, "evt_same", "evt_other")
		if got["evt_same"] != "finished" || got["evt_other"] != "quarantined" {
			t.Fatalf("outcomes %v, want evt_same finished and evt_other quarantined", got)
		}
		if q := r.quarantined(); len(q) != 1 || !strings.Contains(q[0].Reason, "possible duplicate") {
			t.Fatalf("quarantine %+v", q)
		}
	})
}

// One pass of the loop applies the policy at its clock, in batches, and
// reports what it did; Run logs it and stops with its context.
func TestRetention_PassAndRun(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		clk := ledgertest.NewClock()
		store := h.New(t, clk.Now)
		ctx := context.Background()
		var ops []ledger.Operation
		for i := range 7 {
			op, _, err := store.Create(ctx, ledger.NewOperation{Tenant: "acme", Type: "charge",
				IntentRef: "order-" + string(rune('a'+i)), Target: "payments", Payload: []byte(`{"amount":1}`)})
			if err != nil {
				t.Fatal(err)
			}
			op, err = store.Claim(ctx, op.Tenant, op.ID, op.PayloadHash, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if op, err = store.Record(ctx, ledger.Outcome{Tenant: op.Tenant, OperationID: op.ID, Fence: op.Fence,
				From: ledger.InFlight, To: ledger.Succeeded, RemoteRef: "ch_" + op.ID[:8], Actor: ledger.ActorExecutor}); err != nil {
				t.Fatal(err)
			}
			ops = append(ops, op)
			if i == 3 {
				clk.Advance(30 * 24 * time.Hour) // the first four are a month older
			}
		}
		clk.Advance(2 * 24 * time.Hour)
		var logs bytes.Buffer
		loop := &reconciler.Retention{Store: store.(ledger.RetentionStore), Clock: clk, Batch: 2, Tick: time.Hour,
			Log:    slog.New(slog.NewTextHandler(&logs, nil)),
			Policy: ledger.RetentionPolicy{Owner: "ops", RedactPayloadsAfter: 24 * time.Hour, DeleteOperationsAfter: 20 * 24 * time.Hour}}
		rep, err := loop.Pass(ctx)
		if err != nil || rep.Counts.Operations != 4 || rep.Counts.PayloadsRedacted != 3 || rep.Counts.Events != 12 ||
			!rep.Cutoffs.Redact.Equal(clk.Now().Add(-24*time.Hour)) {
			t.Fatalf("pass: %+v %v", rep, err)
		}
		for i, op := range ops {
			got, err := store.Get(ctx, op.Tenant, op.ID)
			switch {
			case i < 4 && ledger.ErrorCode(err) != ledger.ENotFound:
				t.Fatalf("op %d: %v, want deleted", i, err)
			case i >= 4 && (err != nil || !got.Redacted()):
				t.Fatalf("op %d: %+v %v, want redacted", i, got, err)
			}
		}

		// Run: three weeks on, the redacted ones are due for deletion; the
		// loop deletes them at once, logs the counts, and sleeps a tick on
		// the test's clock, when the test looks; a tick later its pass finds
		// nothing and logs nothing; it stops with its context.
		clk.Advance(21 * 24 * time.Hour)
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); _ = loop.Run(runCtx) }()
		clk.WaitTimers(t, 1)
		for _, op := range ops[4:] {
			if _, err := store.Get(ctx, "acme", op.ID); ledger.ErrorCode(err) != ledger.ENotFound {
				t.Fatalf("after Run's first pass: %v, want deleted", err)
			}
		}
		first := logs.String()
		if d := clk.Next(); d < 48*time.Minute || d > 72*time.Minute {
			t.Fatalf("Run slept %s between passes; the tick is 1h, jittered by 20%%", d)
		}
		clk.WaitTimers(t, 1)
		if l := logs.String(); l != first {
			t.Fatalf("a pass that removed nothing logged %q", strings.TrimPrefix(l, first))
		}
		cancel()
		select {
		case <-done:
		case <-time.After(time.Minute): // a safety net against a hang
			t.Fatal("Run did not stop with its context")
		}
		if l := logs.String(); !strings.Contains(l, "pass done") || !strings.Contains(l, "operations=3") ||
			strings.Count(l, "\n") != 1 || strings.Contains(l, "amount") {
			t.Fatalf("log %q", l)
		}
		if err := (&reconciler.Retention{Store: store.(ledger.RetentionStore)}).Run(ctx); err != nil {
			t.Fatalf("a policy that removes nothing: %v", err) // returns at once, or the test hangs
		}
	})
}

// The rig's leak check finds a payload, a secret or a token in a log line
// written the way settle's loops write them, and passes a clean one.
func TestLeakCheck_Finds(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	log.Info("executor: sent", "operation_id", "6f1c2f7e", "status", 201)
	if l := leaked(buf.String()); len(l) != 0 {
		t.Fatalf("a clean line: %v", l)
	}
	log.Error("executor: bad answer", "body", `{"amount":500,"currency":"EUR"}`)
	log.Warn("notifier: refused", "auth", "Bearer stl_abc")
	if l := leaked(buf.String()); len(l) != 4 {
		t.Fatalf("found %d leaks, want the payload's two keys, the header and the token:\n%s", len(l), strings.Join(l, "\n"))
	}
}
