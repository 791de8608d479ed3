package reconciler_test

import (
	"fmt"
	"net/http"
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
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "B", SlowDelay: 600 * time.Millisecond}, nil)
		faults := []sim.Fault{sim.DropAfterCommit, sim.FailAfterCommit, sim.Reset, sim.FailBeforeCommit, sim.Slow, sim.None}
		r.sim.Script(faults...)
		var ops []ledger.Operation
		for i := range faults {
			ops = append(ops, r.create("acme", fmt.Sprintf("tenant-provision-%d", i), 100+i))
		}
		exec := r.executor(r.store)
		exec.Workers = 1 // so the scripted faults meet the operations in order
		sent := func() bool {
			for _, op := range ops {
				if s := r.get(op).State; s == ledger.Prepared || s == ledger.InFlight {
					return false
				}
			}
			return true
		}
		r.runUntil("every operation sent once", 10*time.Second, sent, exec)
		if got := r.sim.Requests(); got != len(ops) {
			t.Fatalf("%d requests for %d operations: something retried", got, len(ops))
		}
		r.runUntil("reconciliation", 10*time.Second, func() bool {
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
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "A"}, nil)
		r.sim.Script(sim.DropAfterCommit)
		op := r.create("acme", "ticket-42", 50)
		r.runUntil("UNKNOWN", 5*time.Second, r.isIn(op, ledger.Unknown), r.executor(r.store))
		_, _, err := r.store.Create(r.ctx, ledger.NewOperation{
			Tenant: "acme", Type: "charge", IntentRef: "ticket-42", Target: "payments",
			Payload: []byte(`{"amount":40,"currency":"EUR","metadata":{"order":"ticket-42"}}`), Bind: r.c.Bind,
			RetryWindow: r.c.RetryWindow(),
		})
		if ledger.ErrorCode(err) != ledger.EPayloadConflict {
			t.Fatalf("edited resubmission: %v", err)
		}
		r.runUntil("SUCCEEDED", 5*time.Second, r.isIn(op, ledger.Succeeded), r.reconciler(), r.executor(r.store))
		objs := r.sim.Objects()
		if len(objs) != 1 || objs[0].Amount != 50 {
			t.Fatalf("remote objects: %+v", objs)
		}
		if n, _ := r.store.PayloadConflicts(r.ctx, "acme", time.Time{}); n != 1 {
			t.Fatalf("conflicts counted: %d", n)
		}
	})
}

// Scenario 3: a worker stalls past its lease. The lease goes to UNKNOWN, not
// back to ready, so nobody sends again; the stalled worker's late verdict is
// discarded by its stale fence.
func TestScenario3_StalledWorkerLeaseExpires(t *testing.T) {
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "B", SlowDelay: 1500 * time.Millisecond}, func(c *target.Contract) {
			c.Timeout = 3 * time.Second
		})
		r.sim.Script(sim.Slow)
		op := r.create("acme", "order-1", 500)
		exec := r.executor(r.store)
		exec.Lease = 300 * time.Millisecond // shorter than the stall
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.runUntil("the stalled answer", 10*time.Second, func() bool {
				return r.get(op).State == ledger.Succeeded && r.sim.Requests() == 1 && time.Since(r.get(op).CreatedAt) > 2*time.Second
			}, exec, r.sweeper(), r.reconciler())
		}()
		wg.Wait()
		if n, reqs := r.remote(op), r.sim.Requests(); n != 1 || reqs != 1 {
			t.Fatalf("%d remote objects after %d requests", n, reqs)
		}
		hist := r.history(op)
		want := []ledger.State{ledger.Prepared, ledger.InFlight, ledger.Unknown}
		for i, s := range want {
			if hist[i] != s {
				t.Fatalf("history %v, want it to start %v", hist, want)
			}
		}
		if got := r.get(op); got.Attempts != 1 {
			t.Fatalf("attempts %d", got.Attempts)
		}
	})
}

// Scenario 4: "not found" read as "failed". Absence stays UNKNOWN unless the
// contract documents all three absence conditions and they hold; only then
// is it FAILED_TERMINAL, with the conditions as evidence.
func TestScenario4_NotFoundIsNotFailed(t *testing.T) {
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		t.Run("ConditionsUnmet", func(t *testing.T) {
			r := newRig(t, h, sim.Config{Class: "B"}, nil)
			r.sim.Script(sim.FailBeforeCommit)
			op := r.create("acme", "order-1", 500)
			r.runUntil("UNKNOWN", 5*time.Second, r.isIn(op, ledger.Unknown), r.executor(r.store))
			r.runUntil("three lookups", 5*time.Second, func() bool { return len(r.history(op)) >= 6 }, r.reconciler())
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
			r.runUntil("FAILED_TERMINAL", 10*time.Second, r.isIn(op, ledger.FailedTerminal),
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

// One tenant's 10,000 UNKNOWN operations must not delay another tenant's 10.
func TestReconciler_TenantFairness(t *testing.T) {
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "B"}, nil)
		var wg sync.WaitGroup
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := w; i < 10000; i += 8 {
					r.create("big", fmt.Sprintf("big-%d", i), 100)
				}
			}(w)
		}
		wg.Wait()
		var small []ledger.Operation
		for i := 0; i < 10; i++ {
			op := r.create("small", fmt.Sprintf("small-%d", i), 100)
			small = append(small, op)
			// The small tenant's charges exist at the target.
			body := fmt.Sprintf(`{"amount":100,"currency":"EUR","metadata":{"order":"small-%d","settle_ref":%q,"settle_tenant":"small"}}`, i, op.RemoteKey)
			resp, err := http.Post(r.srv.URL()+"/v1/charges", "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		// Everything became UNKNOWN without a send: claimed, then leases expired.
		for {
			got, err := r.store.ClaimBatch(r.ctx, 1000, time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 {
				break
			}
		}
		time.Sleep(5 * time.Millisecond)
		if n, err := r.store.SweepExpired(r.ctx); err != nil || n != 10010 {
			t.Fatalf("swept %d, %v", n, err)
		}
		rec := r.reconciler()
		rec.Batch, rec.Workers = 50, 8
		start := time.Now()
		r.runUntil("the small tenant's operations", 30*time.Second, func() bool {
			for _, op := range small {
				if r.get(op).State != ledger.Succeeded {
					return false
				}
			}
			return true
		}, rec)
		t.Logf("small tenant resolved in %s behind a 10,000-operation backlog", time.Since(start))
		page, err := r.store.List(r.ctx, ledger.ListFilter{Tenant: "big", State: ledger.Unknown, Limit: 500})
		if err != nil {
			t.Fatal(err)
		}
		touched := 0
		for _, op := range page.Operations {
			if len(r.history(op)) > 3 {
				touched++
			}
		}
		// The newest 500 of the backlog were untouched when the small tenant
		// was done: it did not wait for the big tenant's queue.
		if touched > 100 {
			t.Fatalf("%d of 500 sampled big-tenant operations were reconciled first", touched)
		}
	})
}
