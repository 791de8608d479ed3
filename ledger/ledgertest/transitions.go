package ledgertest

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"settle/ledger"
)

func testClaim(t *testing.T, h Harness) {
	t.Run("Single", func(t *testing.T) {
		f := setup(t, h)
		op := f.create("acme")
		got, err := f.store.Claim(f.ctx, op.Tenant, op.ID, op.PayloadHash, 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if got.State != ledger.InFlight || got.Fence != 1 || got.Attempts != 1 ||
			got.LeaseExpiresAt == nil || !got.LeaseExpiresAt.Equal(f.clk.Now().Add(30*time.Second)) ||
			got.LastSentAt == nil || !got.LastSentAt.Equal(f.clk.Now()) {
			t.Fatalf("claimed = %+v", got)
		}
		if string(got.Payload) != string(op.Payload) || got.RemoteKey != op.RemoteKey {
			t.Fatal("claim must return the approved bytes and the stored key")
		}
		evs, _ := f.store.Events(f.ctx, op.Tenant, op.ID)
		if len(evs) != 2 || evs[1].From != ledger.Prepared || evs[1].To != ledger.InFlight || evs[1].Fence != 1 {
			t.Fatalf("events = %+v", evs)
		}
	})

	t.Run("Twice", func(t *testing.T) {
		f := setup(t, h)
		op := f.claim("acme")
		_, err := f.store.Claim(f.ctx, op.Tenant, op.ID, op.PayloadHash, time.Minute)
		wantCode(t, err, ledger.EInvalidTransition)
		sameOp(t, op, f.get(op))
	})

	t.Run("NotFound", func(t *testing.T) {
		f := setup(t, h)
		op := f.create("acme")
		_, err := f.store.Claim(f.ctx, "globex", op.ID, op.PayloadHash, time.Minute)
		wantCode(t, err, ledger.ENotFound)
		_, err = f.store.Claim(f.ctx, "acme", uuid.NewString(), op.PayloadHash, time.Minute)
		wantCode(t, err, ledger.ENotFound)
		_, err = f.store.Claim(f.ctx, "acme", op.ID, op.PayloadHash, 0)
		wantCode(t, err, ledger.EInvalid)
		sameOp(t, op, f.get(op))
	})

	t.Run("Batch", func(t *testing.T) {
		f := setup(t, h)
		var ops []ledger.Operation
		for i := 0; i < 5; i++ {
			ops = append(ops, f.create("acme"))
			f.clk.Advance(time.Millisecond)
		}
		f.claim("acme") // not PREPARED any more: never in a batch
		got, err := f.store.ClaimBatch(f.ctx, 3, time.Minute)
		if err != nil || len(got) != 3 {
			t.Fatalf("claimed %d, %v", len(got), err)
		}
		for i, op := range got {
			if op.ID != ops[i].ID || op.State != ledger.InFlight || op.Fence != 1 {
				t.Fatalf("batch[%d] = %s %s fence %d, want oldest first", i, op.ID, op.State, op.Fence)
			}
		}
		rest, _ := f.store.ClaimBatch(f.ctx, 10, time.Minute)
		if len(rest) != 2 {
			t.Fatalf("second batch = %d, want 2", len(rest))
		}
		none, _ := f.store.ClaimBatch(f.ctx, 10, time.Minute)
		if len(none) != 0 {
			t.Fatalf("third batch = %d, want 0", len(none))
		}
		_, err = f.store.ClaimBatch(f.ctx, 0, time.Minute)
		wantCode(t, err, ledger.EInvalid)
	})
	// One tenant's burst does not delay the others: a batch takes every
	// tenant's oldest first, rank by rank, and fills up with the burst's
	// next oldest; within a tenant and in the batch, oldest first.
	t.Run("FairAcrossTenants", func(t *testing.T) {
		f := setup(t, h)
		for i := 0; i < 300; i++ {
			f.create("big")
		}
		f.clk.Advance(time.Second) // the small tenants' work is younger
		for i := 0; i < 10; i++ {
			for _, tenant := range []string{"small-a", "small-b", "small-c"} {
				f.create(tenant)
			}
		}
		got, err := f.store.ClaimBatch(f.ctx, 50, time.Minute)
		if err != nil || len(got) != 50 {
			t.Fatalf("claimed %d, %v", len(got), err)
		}
		byTenant := map[string]int{}
		for i, op := range got {
			byTenant[op.Tenant]++
			if i > 0 && op.CreatedAt.Before(got[i-1].CreatedAt) {
				t.Fatalf("batch[%d] is older than batch[%d]: want oldest first", i, i-1)
			}
		}
		if byTenant["small-a"] != 10 || byTenant["small-b"] != 10 || byTenant["small-c"] != 10 || byTenant["big"] != 20 {
			t.Fatalf("first batch of 50 by tenant: %v; want each small tenant's 10 and 20 of the burst", byTenant)
		}
		rest, err := f.store.ClaimBatch(f.ctx, 500, time.Minute)
		if err != nil || len(rest) != 280 {
			t.Fatalf("the rest: %d, %v; want the burst's other 280", len(rest), err)
		}
	})
}

func testRecord(t *testing.T, h Harness) {
	t.Run("BatchIsolatesBadRows", func(t *testing.T) { testBatchIsolation(t, h) })
	t.Run("Succeeded", func(t *testing.T) {
		f := setup(t, h)
		op := f.claim("acme")
		got := f.record(op, ledger.InFlight, ledger.Succeeded)
		if got.State != ledger.Succeeded || got.RemoteRef == "" || got.LeaseExpiresAt != nil || got.Reason != "test" {
			t.Fatalf("recorded = %+v", got)
		}
		evs, _ := f.store.Events(f.ctx, op.Tenant, op.ID)
		last := evs[len(evs)-1]
		if last.From != ledger.InFlight || last.To != ledger.Succeeded || last.Actor != ledger.ActorExecutor ||
			!strings.Contains(string(last.Evidence), `"status"`) {
			t.Fatalf("last event = %+v", last)
		}
	})

	t.Run("SucceededNeedsRemoteRef", func(t *testing.T) {
		f := setup(t, h)
		op := f.claim("acme")
		o := outcome(op, ledger.InFlight, ledger.Succeeded)
		o.RemoteRef = ""
		_, err := f.store.Record(f.ctx, o)
		wantCode(t, err, ledger.EInvalid)
		sameOp(t, op, f.get(op))
	})

	t.Run("StaleFence", func(t *testing.T) {
		f := setup(t, h)
		op := f.claim("acme")
		o := outcome(op, ledger.InFlight, ledger.Succeeded)
		o.Fence--
		_, err := f.store.Record(f.ctx, o)
		wantCode(t, err, ledger.EStaleFence)
		sameOp(t, op, f.get(op))
	})

	t.Run("WrongFromState", func(t *testing.T) {
		f := setup(t, h)
		op := f.claim("acme")
		_, err := f.store.Record(f.ctx, outcome(op, ledger.Unknown, ledger.Succeeded))
		wantCode(t, err, ledger.EStaleFence)
		sameOp(t, op, f.get(op))
	})

	t.Run("OtherTenant", func(t *testing.T) {
		f := setup(t, h)
		op := f.claim("acme")
		o := outcome(op, ledger.InFlight, ledger.Succeeded)
		o.Tenant = "globex"
		_, err := f.store.Record(f.ctx, o)
		wantCode(t, err, ledger.ENotFound)
		sameOp(t, op, f.get(op))
	})

	t.Run("BadInput", func(t *testing.T) {
		f := setup(t, h)
		op := f.claim("acme")
		for name, c := range map[string]struct {
			mutate func(*ledger.Outcome)
			code   ledger.Code
		}{
			"NoActor":      {func(o *ledger.Outcome) { o.Actor = "" }, ledger.EInvalid},
			"HugeEvidence": {func(o *ledger.Outcome) { o.Evidence = map[string]any{"x": strings.Repeat("a", 5000)} }, ledger.EInvalid},
			"LongReason":   {func(o *ledger.Outcome) { o.Reason = strings.Repeat("a", 501) }, ledger.EInvalid},
			"BadState":     {func(o *ledger.Outcome) { o.To = "DONE" }, ledger.EInvalid},
			"BackToReady":  {func(o *ledger.Outcome) { o.To = ledger.Prepared }, ledger.EInvalidTransition},
			"FromPrepared": {func(o *ledger.Outcome) { o.From, o.To = ledger.Prepared, ledger.InFlight }, ledger.EInvalidTransition},
		} {
			t.Run(name, func(t *testing.T) {
				o := outcome(op, ledger.InFlight, ledger.Succeeded)
				c.mutate(&o)
				_, err := f.store.Record(f.ctx, o)
				wantCode(t, err, c.code)
			})
		}
		sameOp(t, op, f.get(op))
	})

	// Every (from, to) pair: Record applies exactly the table's transitions
	// out of IN_FLIGHT and UNKNOWN and refuses everything else.
	t.Run("TransitionMatrix", func(t *testing.T) {
		f := setup(t, h)
		for _, from := range ledger.States {
			for _, to := range ledger.States {
				t.Run(string(from)+"_to_"+string(to), func(t *testing.T) {
					op := f.inState("acme", from)
					if from == ledger.Unknown {
						op = f.lease(op)
					}
					_, err := f.store.Record(f.ctx, outcome(op, from, to))
					allowed := (from == ledger.InFlight || from == ledger.Unknown) && ledger.CanTransition(from, to)
					if allowed != (err == nil) {
						t.Fatalf("%s → %s: err = %v, allowed by table = %v", from, to, err, allowed)
					}
					got := f.get(op)
					if allowed && got.State != to {
						t.Fatalf("state = %s, want %s", got.State, to)
					}
					if !allowed {
						sameOp(t, op, got)
					}
				})
			}
		}
	})

	t.Run("Batch", func(t *testing.T) {
		f := setup(t, h)
		a, b, c := f.claim("acme"), f.claim("acme"), f.claim("globex")
		stale := outcome(b, ledger.InFlight, ledger.Succeeded)
		stale.Fence = 7
		dup := outcome(a, ledger.InFlight, ledger.FailedTerminal)
		errs, err := f.store.RecordBatch(f.ctx, []ledger.Outcome{
			outcome(a, ledger.InFlight, ledger.Succeeded), stale, outcome(c, ledger.InFlight, ledger.Unknown), dup,
		})
		if err != nil {
			t.Fatal(err)
		}
		if errs[0] != nil || errs[2] != nil {
			t.Fatalf("errs = %v", errs)
		}
		wantCode(t, errs[1], ledger.EStaleFence)
		wantCode(t, errs[3], ledger.EInvalid)
		if f.get(a).State != ledger.Succeeded || f.get(b).State != ledger.InFlight || f.get(c).State != ledger.Unknown {
			t.Fatal("batch applied the wrong outcomes")
		}
		if next := f.get(c).NextReconcileAt; next == nil || !next.Equal(f.clk.Now()) {
			t.Fatalf("UNKNOWN from the sender must be due at once, next = %v", next)
		}
	})
}

func testSweepAndLease(t *testing.T, h Harness) {
	t.Run("SweepExpired", func(t *testing.T) {
		f := setup(t, h)
		expired := f.claim("acme")
		f.clk.Advance(30 * time.Second)
		fresh := f.claim("acme")
		f.create("acme")
		f.clk.Advance(31 * time.Second)
		n, err := f.store.SweepExpired(f.ctx)
		if err != nil || n != 1 {
			t.Fatalf("swept %d, %v", n, err)
		}
		got := f.get(expired)
		if got.State != ledger.Unknown || got.Fence != expired.Fence || got.LeaseExpiresAt != nil ||
			got.NextReconcileAt == nil || !got.NextReconcileAt.Equal(f.clk.Now()) {
			t.Fatalf("swept = %+v", got)
		}
		sameOp(t, fresh, f.get(fresh))
		evs, _ := f.store.Events(f.ctx, got.Tenant, got.ID)
		if last := evs[len(evs)-1]; last.Actor != ledger.ActorSweeper || last.From != ledger.InFlight || last.To != ledger.Unknown {
			t.Fatalf("sweep event = %+v", last)
		}
		if n, _ := f.store.SweepExpired(f.ctx); n != 0 {
			t.Fatalf("second sweep moved %d", n)
		}
	})

	t.Run("LeaseUnknown", func(t *testing.T) {
		f := setup(t, h)
		op := f.unknown("acme")
		leased, err := f.store.LeaseUnknown(f.ctx, 10, 20*time.Second)
		if err != nil || len(leased) != 1 {
			t.Fatalf("leased %d, %v", len(leased), err)
		}
		l := leased[0]
		if l.State != ledger.Unknown || l.Fence != op.Fence+1 || l.LeaseExpiresAt == nil {
			t.Fatalf("leased = %+v", l)
		}
		if again, _ := f.store.LeaseUnknown(f.ctx, 10, 20*time.Second); len(again) != 0 {
			t.Fatal("a held lease was handed out again")
		}
		// The reconciler dies; its lease runs out; another takes over.
		f.clk.Advance(21 * time.Second)
		second, _ := f.store.LeaseUnknown(f.ctx, 10, 20*time.Second)
		if len(second) != 1 || second[0].Fence != l.Fence+1 {
			t.Fatalf("re-lease = %+v", second)
		}
		_, err = f.store.Record(f.ctx, outcome(l, ledger.Unknown, ledger.Succeeded))
		wantCode(t, err, ledger.EStaleFence)
		// The current holder reschedules: not due before next, due after.
		next := f.clk.Now().Add(5 * time.Minute)
		o := outcome(second[0], ledger.Unknown, ledger.Unknown)
		replayed := f.clk.Now()
		o.NextAt, o.Actor, o.SentAt = &next, ledger.ActorReconciler, &replayed
		got, err := f.store.Record(f.ctx, o)
		if err != nil || got.NextReconcileAt == nil || !got.NextReconcileAt.Equal(next) || got.LeaseExpiresAt != nil ||
			got.LastSentAt == nil || !got.LastSentAt.Equal(replayed) {
			t.Fatalf("reschedule = %+v, %v", got, err)
		}
		if due, _ := f.store.LeaseUnknown(f.ctx, 10, time.Minute); len(due) != 0 {
			t.Fatal("leased before next_reconcile_at")
		}
		f.clk.Advance(5 * time.Minute)
		if due, _ := f.store.LeaseUnknown(f.ctx, 10, time.Minute); len(due) != 1 {
			t.Fatal("not leased after next_reconcile_at")
		}
	})

	// A reconciler whose slots for a target are all taken names it: that
	// target's due operations stay due and untouched, and the others are
	// leased, even behind an older backlog of the skipped one.
	t.Run("LeaseUnknownSkipsTargets", func(t *testing.T) {
		f := setup(t, h)
		var hung []ledger.Operation
		for _, tenant := range []string{"acme", "acme", "acme", "beta", "beta"} {
			hung = append(hung, f.unknownOn(tenant, "hung"))
		}
		f.clk.Advance(time.Second) // the healthy target's work is younger
		healthy := map[string]bool{f.unknownOn("acme", "payments").ID: true, f.unknownOn("acme", "payments").ID: true}
		before := make([]ledger.Operation, len(hung))
		for i, op := range hung {
			before[i] = f.get(op)
		}
		leased, err := f.store.LeaseUnknown(f.ctx, 2, time.Minute, "hung")
		if err != nil || len(leased) != 2 {
			t.Fatalf("leased %d, %v", len(leased), err)
		}
		for _, op := range leased {
			if !healthy[op.ID] || op.Target != "payments" {
				t.Fatalf("leased %s of target %s", op.ID, op.Target)
			}
		}
		for i, op := range hung {
			sameOp(t, before[i], f.get(op))
		}
		f.clk.Advance(2 * time.Minute) // the healthy leases run out
		if got, err := f.store.LeaseUnknown(f.ctx, 50, time.Minute, "payments", "hung"); err != nil || len(got) != 0 {
			t.Fatalf("leased %d with every target skipped, %v", len(got), err)
		}
		got, err := f.store.LeaseUnknown(f.ctx, 50, time.Minute, "payments")
		if err != nil || len(got) != len(hung) {
			t.Fatalf("leased %d of the %d skipped before, %v", len(got), len(hung), err)
		}
		for _, op := range got {
			if op.Target != "hung" {
				t.Fatalf("leased %s of target %s", op.ID, op.Target)
			}
		}
		if got, err := f.store.LeaseUnknown(f.ctx, 50, time.Minute); err != nil || len(got) != 2 {
			t.Fatalf("leased %d with none skipped, %v", len(got), err)
		}
	})

	// One tenant's backlog must not starve another tenant's few.
	t.Run("LeaseIsFairAcrossTenants", func(t *testing.T) {
		f := setup(t, h)
		for i := 0; i < 1000; i++ {
			f.create("big")
		}
		f.clk.Advance(time.Second) // the small tenant's work is younger
		for i := 0; i < 10; i++ {
			f.create("small")
		}
		for {
			got, err := f.store.ClaimBatch(f.ctx, 500, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 {
				break
			}
		}
		f.clk.Advance(2 * time.Minute)
		if n, err := f.store.SweepExpired(f.ctx); err != nil || n != 1010 {
			t.Fatalf("swept %d, %v", n, err)
		}
		leased, err := f.store.LeaseUnknown(f.ctx, 50, time.Minute)
		if err != nil || len(leased) != 50 {
			t.Fatalf("leased %d, %v", len(leased), err)
		}
		small := 0
		for _, op := range leased {
			if op.Tenant == "small" {
				small++
			}
		}
		if small != 10 {
			t.Fatalf("first batch of 50 held %d of the small tenant's 10 operations", small)
		}
	})

	// Scenario 3 of the paper: the lease that expired and was handed out
	// again. Here the expired lease goes to UNKNOWN, and the stalled worker's
	// late result is discarded.
	t.Run("StaleWorker", func(t *testing.T) {
		f := setup(t, h)
		a := f.claim("acme") // worker A holds fence 1 and sends
		f.clk.Advance(2 * time.Minute)
		if _, err := f.store.SweepExpired(f.ctx); err != nil {
			t.Fatal(err)
		}
		leased, err := f.store.LeaseUnknown(f.ctx, 1, time.Minute)
		if err != nil || len(leased) != 1 {
			t.Fatalf("reconciler lease: %d, %v", len(leased), err)
		}
		before := f.get(a)
		for _, to := range []ledger.State{ledger.Succeeded, ledger.FailedTerminal, ledger.Unknown} {
			_, err := f.store.Record(f.ctx, outcome(a, ledger.InFlight, to))
			wantCode(t, err, ledger.EStaleFence)
		}
		sameOp(t, before, f.get(a))
		if _, err := f.store.Claim(f.ctx, a.Tenant, a.ID, a.PayloadHash, time.Minute); err == nil {
			t.Fatal("an UNKNOWN operation was claimed for sending again")
		}
		got, err := f.store.Record(f.ctx, outcome(leased[0], ledger.Unknown, ledger.Succeeded))
		if err != nil || got.State != ledger.Succeeded {
			t.Fatalf("reconciler record: %v", err)
		}
	})
}
