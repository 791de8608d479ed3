package reconciler_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/storetest"
	"settle/target"
	"settle/target/sim"
)

// The paper's four failure scenarios, each a regression test that the naive
// design fails.

// Scenario 1: three layers retry one call, each with a fresh key. Here no
// layer retries: whatever goes wrong, each operation reaches the target
// once from the executor, and reconciliation never adds an object.
func TestScenario1_NoRetryLayers(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "B", SlowDelay: 600 * time.Millisecond}, func(c *target.Contract) {
			c.Timeout = 400 * time.Millisecond // the slow answer times out
		})
		faults := []sim.Fault{sim.DropAfterCommit, sim.FailAfterCommit, sim.Reset, sim.FailBeforeCommit, sim.Slow, sim.None}
		r.sim.Script(faults...)
		var ops []ledger.Operation
		for i := range faults {
			ops = append(ops, r.create("acme", fmt.Sprintf("tenant-provision-%d", i), 100+i))
		}
		exec := r.executor(r.store)
		exec.Workers = 1 // so the scripted faults meet the operations in order
		// With one worker the six wait their turn in the executor's queue,
		// and one that waits past its queue allowance (a quarter of the
		// lease) is never sent: with the rig's 2 s lease a loaded machine
		// left one IN_FLIGHT, with no sweeper running here to expire it.
		exec.Lease = 20 * time.Second
		sent := func() bool {
			for _, op := range ops {
				if s := r.get(op).State; s == ledger.Prepared || s == ledger.InFlight {
					return false
				}
			}
			return true
		}
		r.runUntil("every operation sent once", sent, exec)
		if got := r.sim.Requests(); got != len(ops) {
			t.Fatalf("%d requests for %d operations: something retried", got, len(ops))
		}
		r.runUntil("reconciliation", func() bool {
			return r.get(ops[0]).State == ledger.Succeeded && r.get(ops[4]).State == ledger.Succeeded
		}, r.reconciler(), r.sweeper())
		if got := r.sim.Requests(); got != len(ops) {
			t.Fatalf("reconciliation of a class B target re-sent: %d requests", got)
		}
		for i, op := range ops {
			want := 1
			if faults[i] == sim.Reset || faults[i] == sim.FailBeforeCommit {
				want = 0
			}
			if n := r.remote(op); n != want {
				t.Fatalf("operation %d (%s): %d remote objects, want %d", i, faults[i], n, want)
			}
		}
		if s := r.get(ops[3]).State; s != ledger.Unknown {
			t.Fatalf("never-committed operation is %s; absence must not be read as failure", s)
		}
	})
}

// Scenario 2: the agent edits the amount after a timeout and resubmits
// under the same intent. The edit is a conflict; the original is resolved
// and is the only charge.
func TestScenario2_EditedAmount(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "A"}, nil)
		r.sim.Script(sim.DropAfterCommit)
		op := r.create("acme", "ticket-42", 50)
		r.runUntil("UNKNOWN", r.isIn(op, ledger.Unknown), r.executor(r.store))
		_, _, err := r.store.Create(r.ctx, ledger.NewOperation{
			Tenant: "acme", Type: "charge", IntentRef: "ticket-42", Target: "payments",
			Payload: []byte(`{"amount":40,"currency":"EUR","metadata":{"order":"ticket-42"}}`), Bind: r.c.Bind,
			RetryWindow: r.c.RetryWindow(),
		})
		if ledger.ErrorCode(err) != ledger.EPayloadConflict {
			t.Fatalf("edited resubmission: %v", err)
		}
		r.runUntil("SUCCEEDED", r.isIn(op, ledger.Succeeded), r.reconciler(), r.executor(r.store))
		objs := r.sim.Objects()
		if len(objs) != 1 || objs[0].Amount != 50 {
			t.Fatalf("remote objects: %+v", objs)
		}
		if n, _ := r.store.PayloadConflicts(r.ctx, "acme", ledger.Since(time.Time{})); n != 1 {
			t.Fatalf("conflicts counted: %d", n)
		}
	})
}

// Scenario 3: a worker stalls past its lease. The lease goes to UNKNOWN, not
// back to ready, so nobody sends again; the stalled worker's late verdict is
// discarded by its stale fence.
func TestScenario3_StalledWorkerLeaseExpires(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "B"}, func(c *target.Contract) {
			c.Timeout = patience // the client waits for the held answer
		})
		// The target commits the charge at once and holds its answer back,
		// so the sender stalls past its lease until the test lets it go;
		// the reconciler's lookup is held the same way.
		answer, release := r.latch()
		lookups := make(chan struct{}, 100)
		sends := make(chan struct{}, 100)
		lookup, openLookups := r.latch()
		r.proxy(func(w http.ResponseWriter, req *http.Request, next http.Handler) {
			if req.Method == http.MethodPost {
				sends <- struct{}{}
				heldAnswer(w, req, next, answer)
				return
			}
			gated(w, req, next, lookups, lookup)
		})
		op := r.create("acme", "order-1", 500)
		var logs syncBuffer
		exec := r.executor(r.store)
		// Far shorter than the stall, and long enough that the claimed
		// operation is sent within its queue allowance (a quarter of the
		// lease) on a loaded machine: one that waits longer is never sent,
		// and there would be no stalled verdict to refuse.
		exec.Lease = 2 * time.Second
		exec.Log = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn})).With("component", "executor")
		stop := r.start(exec, r.sweeper(), r.reconciler())
		// The lease expires into UNKNOWN; the reconciler leases the
		// operation under a new fence and asks the target.
		await(t, "the executor's send", sends)
		await(t, "the reconciler's lookup", lookups)
		held := r.get(op)
		// The stalled sender's answer arrives while the reconciler holds the
		// operation: its verdict is refused as stale and changes nothing.
		release()
		discarded := `msg="verdict discarded" component=executor operation_id=` + op.ID + " code=" + string(ledger.EStaleFence)
		r.waitFor("the stalled verdict to be recorded or refused", func() bool {
			return strings.Contains(logs.String(), discarded) || r.get(op).State != ledger.Unknown
		})
		if got := r.get(op); got.State != ledger.Unknown || got.Fence != held.Fence || !got.UpdatedAt.Equal(held.UpdatedAt) {
			t.Fatalf("the stalled worker's verdict was applied: %s under fence %d", got.State, got.Fence)
		}
		openLookups()
		r.waitFor("the reconciler's verdict", r.isIn(op, ledger.Succeeded))
		stop()

		if n, reqs := r.remote(op), r.sim.Requests(); n != 1 || reqs != 1 {
			t.Fatalf("%d remote objects after %d requests", n, reqs)
		}
		evs, err := r.store.Events(r.ctx, op.Tenant, op.ID)
		if err != nil {
			t.Fatal(err)
		}
		var states []ledger.State
		for _, e := range evs {
			states = append(states, e.To)
		}
		want := []ledger.State{ledger.Prepared, ledger.InFlight, ledger.Unknown, ledger.Succeeded}
		if !slices.Equal(states, want) {
			t.Fatalf("history %v, want %v", states, want)
		}
		// The executor's only event is its claim; the confirmation is the
		// reconciler's, under a fence past the one the executor sent with.
		claim, confirmed := evs[1], evs[3]
		if claim.Actor != ledger.ActorExecutor || confirmed.Actor != ledger.ActorReconciler || confirmed.Fence <= claim.Fence {
			t.Fatalf("claimed by %s under fence %d, confirmed by %s under fence %d",
				claim.Actor, claim.Fence, confirmed.Actor, confirmed.Fence)
		}
		if got := r.get(op); got.Attempts != 1 || got.Fence != confirmed.Fence {
			t.Fatalf("attempts %d, fence %d", got.Attempts, got.Fence)
		}
	})
}

// Scenario 4: "not found" read as "failed". Absence stays UNKNOWN unless the
// contract documents all three absence conditions and they hold; only then
// is it FAILED_TERMINAL, with the conditions as evidence.
func TestScenario4_NotFoundIsNotFailed(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		t.Run("ConditionsUnmet", func(t *testing.T) {
			r := newRig(t, h, sim.Config{Class: "B"}, nil)
			r.sim.Script(sim.FailBeforeCommit)
			op := r.create("acme", "order-1", 500)
			r.runUntil("UNKNOWN", r.isIn(op, ledger.Unknown), r.executor(r.store))
			r.runUntil("three lookups", func() bool { return len(r.history(op)) >= 6 }, r.reconciler())
			if got := r.get(op); got.State != ledger.Unknown || r.sim.Requests() != 1 {
				t.Fatalf("state %s after %d requests", got.State, r.sim.Requests())
			}
		})
		t.Run("AllThreeHold", func(t *testing.T) {
			r := newRig(t, h, sim.Config{Class: "B"}, func(c *target.Contract) {
				c.Lookup.ReadAfterWrite, c.LateRequestsRejected, c.Deadline = true, true, 300*time.Millisecond
			})
			r.sim.Script(sim.FailBeforeCommit)
			op := r.create("acme", "order-1", 500)
			r.runUntil("FAILED_TERMINAL", r.isIn(op, ledger.FailedTerminal),
				r.executor(r.store), r.reconciler())
			ev := r.lastEvent(op)
			for _, rule := range []string{"visibility", "late", "replay"} {
				if !strings.Contains(string(ev.Evidence), rule) {
					t.Fatalf("evidence %s lacks the %q condition", ev.Evidence, rule)
				}
			}
			if r.sim.Requests() != 1 || len(r.sim.Objects()) != 0 {
				t.Fatal("re-sent after not found")
			}
		})
	})
}

// One tenant's large UNKNOWN backlog must not delay another tenant's few
// operations. The test drives the reconciler pass by pass as Run does
// (lease a batch, resolve each operation, record the batch) on a fake clock
// and counts the big tenant's operations worked before every one of the
// small tenant's was resolved. Fair leasing resolves the small tenant in the
// first pass, beside at most a batch's remainder of the backlog; leasing by
// due time alone would work through the whole, older backlog first.
func TestReconciler_TenantFairness(t *testing.T) {
	t.Parallel()
	const backlog, few, batch = 200, 10, 50
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		clk := ledgertest.NewClock()
		r := newRigAt(t, h, sim.Config{Class: "B"}, nil, clk.Now)
		// expire makes n operations UNKNOWN without a send: claimed, then
		// their leases run out.
		expire := func(n int) {
			t.Helper()
			for claimed := 0; claimed < n; {
				got, err := r.store.ClaimBatch(r.ctx, ledger.MaxListLimit, time.Minute)
				if err != nil || len(got) == 0 {
					t.Fatalf("claimed %d of %d, %v", claimed, n, err)
				}
				claimed += len(got)
			}
			clk.Advance(2 * time.Minute)
			if swept, err := r.store.SweepExpired(r.ctx); err != nil || swept != n {
				t.Fatalf("swept %d of %d, %v", swept, n, err)
			}
		}
		r.createMany(backlog, func(i int) (string, string, int) { return "big", fmt.Sprintf("big-%d", i), 100 })
		expire(backlog)
		bigDue := clk.Now()
		clk.Advance(time.Second) // the small tenant's work is younger
		small := r.createMany(few, func(i int) (string, string, int) { return "small", fmt.Sprintf("small-%d", i), 100 })
		for _, op := range small {
			// The small tenant's charges exist at the target: the approved
			// bytes themselves, carrying their reference and tenant.
			resp, err := http.Post(r.srv.URL()+"/v1/charges", "application/json", bytes.NewReader(op.Payload))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		expire(few)

		rec := r.reconciler()
		rec.Now = clk.Now
		resolved := func() bool {
			for _, op := range small {
				if r.get(op).State != ledger.Succeeded {
					return false
				}
			}
			return true
		}
		bigWorked, passes := 0, 0
		for !resolved() {
			if passes > backlog/batch+1 {
				t.Fatalf("the small tenant is not resolved after %d passes", passes)
			}
			passes++
			leased, err := r.store.LeaseUnknown(r.ctx, batch, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			outs := make([]ledger.Outcome, len(leased))
			for i, op := range leased {
				if op.Tenant == "big" {
					bigWorked++
				}
				outs[i] = rec.Resolve(r.ctx, op)
			}
			errs, err := r.store.RecordBatch(r.ctx, outs)
			if err != nil {
				t.Fatal(err)
			}
			for i, err := range errs {
				if err != nil {
					t.Fatalf("recording %s: %v", outs[i].OperationID, err)
				}
			}
		}
		// The ledger agrees: only the operations worked were touched since
		// the backlog fell due.
		touched := 0
		for f := (ledger.ListFilter{Tenant: "big", Limit: ledger.MaxListLimit}); ; {
			page, err := r.store.List(r.ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			for _, op := range page.Operations {
				if op.UpdatedAt.After(bigDue) {
					touched++
				}
			}
			if f.Cursor = page.Next; f.Cursor == "" {
				break
			}
		}
		t.Logf("the small tenant's %d operations were resolved in %d pass(es), beside %d of the big tenant's %d",
			few, passes, bigWorked, backlog)
		if touched != bigWorked {
			t.Fatalf("%d of the big tenant's operations were touched, %d worked", touched, bigWorked)
		}
		if passes != 1 || bigWorked > batch-few {
			t.Fatalf("the small tenant waited behind %d of the big tenant's operations (%d passes of %d)",
				bigWorked, passes, batch)
		}
	})
}

// claimOrder is a Store that keeps every operation ClaimBatch returns, in
// the order of the claims.
type claimOrder struct {
	ledger.Store
	mu  sync.Mutex
	ops []ledger.Operation
}

func (s *claimOrder) ClaimBatch(ctx context.Context, n int, lease time.Duration, byTarget ...ledger.TargetLease) ([]ledger.Operation, error) {
	ops, err := s.Store.ClaimBatch(ctx, n, lease, byTarget...)
	s.mu.Lock()
	s.ops = append(s.ops, ops...)
	s.mu.Unlock()
	return ops, err
}

func (s *claimOrder) claimed() []ledger.Operation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ops)
}

// TestExecutor_TenantFairness: one tenant's burst does not delay the
// others' sends. A tenant with 400 PREPARED charges is followed by ten
// tenants with five each, all younger; a first-in-first-out claim would
// send the whole burst first. Claims are fair across tenants, so the
// small tenants' charges are all sent while most of the burst still
// waits.
func TestExecutor_TenantFairness(t *testing.T) {
	t.Parallel()
	const burst, tenants, each = 400, 10, 5
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		clk := ledgertest.NewClock()
		r := newRigAt(t, h, sim.Config{Class: "B"}, nil, clk.Now)
		r.createMany(burst, func(i int) (string, string, int) { return "big", fmt.Sprintf("big-%d", i), 100 })
		clk.Advance(time.Second) // the small tenants' work is younger
		small := r.createMany(tenants*each, func(i int) (string, string, int) {
			return fmt.Sprintf("small-%d", i%tenants), fmt.Sprintf("small-%d", i), 100
		})
		claims := &claimOrder{Store: r.store}
		r.runUntil("every small tenant's charges to be sent", func() bool {
			for _, op := range small {
				if r.get(op).State == ledger.Prepared {
					return false
				}
			}
			return true
		}, r.executor(claims))
		// The burst's charges claimed before the last of the small
		// tenants' (counted in claim order, so that the executor's claims
		// after it, while the test sees it and stops, do not count).
		sent, last := 0, 0
		order := claims.claimed()
		for i, op := range order {
			if op.Tenant != "big" {
				last = i
			}
		}
		for _, op := range order[:last] {
			if op.Tenant == "big" {
				sent++
			}
		}
		// Fair claims take the burst's oldest once per round of eleven
		// tenants: about one in eleven of the sends before the small
		// tenants are done. The bound leaves room for the executor's
		// batching, and is far below the 400 a FIFO claim sends first.
		if sent > burst/4 {
			t.Fatalf("%d of the burst's %d charges were claimed before the last of the small tenants' %d", sent, burst, len(small))
		}
		t.Logf("%d of the burst's charges claimed before the last of the small tenants' %d", sent, len(small))
	})
}
