package reconciler_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/storetest"
	"settle/reconciler"
	"settle/target"
	"settle/target/sim"
)

// The paper's six fault-injection tests, each on both stores.

// 1. The server commits and the response is dropped: UNKNOWN, then
// SUCCEEDED after reconciliation, exactly one remote object — whether the
// reconciler replays the key (class A) or looks the object up (class B).
func TestFault1_CommitThenDropResponse(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		for _, class := range []string{"A", "B"} {
			t.Run("Class"+class, func(t *testing.T) {
				r := newRig(t, h, sim.Config{Class: class}, nil)
				r.sim.Script(sim.DropAfterCommit)
				op := r.create("acme", "order-1", 500)
				r.runUntil("UNKNOWN", r.isIn(op, ledger.Unknown), r.executor(r.store))
				if got := r.get(op); got.Reason == "" || !strings.Contains(got.Reason, "no response") {
					t.Fatalf("reason %q", got.Reason)
				}
				if r.remote(op) != 1 {
					t.Fatal("the simulator did not commit")
				}
				r.runUntil("SUCCEEDED", r.isIn(op, ledger.Succeeded), r.reconciler())
				got := r.get(op)
				objs := r.sim.Objects()
				if r.remote(op) != 1 || got.RemoteRef != objs[0].ID || got.Attempts != 1 {
					t.Fatalf("remote objects %d, ref %q (want %q), attempts %d", r.remote(op), got.RemoteRef, objs[0].ID, got.Attempts)
				}
				want := []ledger.State{ledger.Prepared, ledger.InFlight, ledger.Unknown, ledger.Succeeded}
				if h := r.history(op); !slices.Equal(h, want) {
					t.Fatalf("history %v, want %v", h, want)
				}
			})
		}
	})
}

// 2. The worker dies after sending and before recording: the lease expires
// into UNKNOWN, and reconciliation resolves it with one remote object.
func TestFault2_WorkerKilledAfterSend(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "B"}, func(c *target.Contract) {
			c.Timeout = patience
		})
		r.holdAnswers() // commits, then holds the answer until the client gives up
		op := r.create("acme", "order-1", 500)
		exec := r.executor(r.store)
		exec.Lease, exec.Grace = 2*time.Second, 10*time.Millisecond
		// Kill the executor once the target has committed the charge; the
		// answer never reaches it.
		r.runUntil("the charge to be committed", func() bool { return r.remote(op) == 1 }, exec)
		if got := r.get(op); got.State != ledger.InFlight {
			t.Fatalf("a killed worker recorded %s", got.State)
		}
		r.runUntil("the lease to expire into UNKNOWN", r.isIn(op, ledger.Unknown), r.sweeper())
		r.runUntil("SUCCEEDED", r.isIn(op, ledger.Succeeded), r.reconciler())
		if n := r.remote(op); n != 1 {
			t.Fatalf("%d remote objects", n)
		}
		if e := r.history(op); e[2] != ledger.Unknown {
			t.Fatalf("history %v: the expired lease must pass through UNKNOWN", e)
		}
	})
}

// 3. Two workers race to claim: each operation is sent by one of them only.
func TestFault3_TwoWorkersRace(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		// No idempotency to hide a double send. Only executors run, so a
		// send that timed out (UNKNOWN) or a lease that ran out on a
		// loaded machine would never reach SUCCEEDED: the timeout and the
		// leases are long, this test is about the race to claim.
		r := newRig(t, h, sim.Config{Class: "D"}, func(c *target.Contract) { c.Timeout = 30 * time.Second })
		var ops []ledger.Operation
		for i := 0; i < 200; i++ {
			ops = append(ops, r.create("acme", "order-"+string(rune('a'+i%26))+strings.Repeat("x", i/26), 100+i))
		}
		other := h.Sibling(t, r.store, time.Now)
		done := func() bool {
			page, _ := r.store.List(r.ctx, ledger.ListFilter{Tenant: "acme", State: ledger.Succeeded, Limit: 500})
			return len(page.Operations) == len(ops)
		}
		long := func(e *reconciler.Executor) *reconciler.Executor { e.Lease = time.Minute; return e }
		r.runUntil("all SUCCEEDED", done, long(r.executor(r.store)), long(r.executor(other)))
		if got := r.sim.Requests(); got != len(ops) {
			t.Fatalf("%d create requests for %d operations", got, len(ops))
		}
		for _, op := range ops {
			if n := r.remote(op); n != 1 {
				t.Fatalf("%s: %d remote objects", op.ID, n)
			}
		}
	})
}

// 4. Same intent, changed payload: rejected, and only the approved payload
// is ever sent.
func TestFault4_ChangedPayloadNeverSent(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "A"}, nil)
		op := r.create("acme", "credit-9", 50)
		_, _, err := r.store.Create(r.ctx, ledger.NewOperation{
			Tenant: "acme", Type: "charge", IntentRef: "credit-9", Target: "payments",
			Payload: []byte(`{"amount":40,"currency":"EUR","metadata":{"order":"credit-9"}}`), Bind: r.c.Bind,
			RetryWindow: r.c.RetryWindow(),
		})
		if ledger.ErrorCode(err) != ledger.EPayloadConflict {
			t.Fatalf("changed payload: %v", err)
		}
		r.runUntil("SUCCEEDED", r.isIn(op, ledger.Succeeded), r.executor(r.store))
		objs := r.sim.Objects()
		if len(objs) != 1 || objs[0].Amount != 50 || r.sim.Requests() != 1 {
			t.Fatalf("remote objects %+v after %d requests", objs, r.sim.Requests())
		}
	})
}

// 5. The lookup finds nothing while the target is slow to show the object:
// the operation stays UNKNOWN, never FAILED_TERMINAL, until it appears.
func TestFault5_LookupEmptyWhileSlow(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "B", LookupLag: time.Hour}, nil)
		r.sim.Script(sim.DropAfterCommit)
		op := r.create("acme", "order-1", 500)
		r.runUntil("UNKNOWN", r.isIn(op, ledger.Unknown), r.executor(r.store))
		rounds := func() bool {
			n := 0
			for _, s := range r.history(op) {
				if s == ledger.Unknown {
					n++
				}
			}
			return n >= 5 // several inconclusive lookups recorded
		}
		r.runUntil("five inconclusive lookups", rounds, r.reconciler())
		if got := r.get(op); got.State != ledger.Unknown {
			t.Fatalf("state %s after lookups that found nothing", got.State)
		}
		ev := r.lastEvent(op)
		if !strings.Contains(string(ev.Evidence), `"absence"`) || !strings.Contains(ev.Reason, "absence alone proves nothing") {
			t.Fatalf("evidence %s, reason %q", ev.Evidence, ev.Reason)
		}
		r.sim.SetLookupLag(0)
		r.runUntil("SUCCEEDED once visible", r.isIn(op, ledger.Succeeded), r.reconciler())
		if r.remote(op) != 1 {
			t.Fatal("duplicate remote object")
		}
	})
}

// 6. Unmatched or cross-tenant evidence changes nothing: matching reads
// only, scopes by the tenant the evidence names, and never guesses one.
func TestFault6_UnmatchedOrCrossTenantEvidence(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "B"}, nil)
		r.sim.Script(sim.FailBeforeCommit)
		op := r.create("acme", "order-1", 500)
		r.runUntil("UNKNOWN", r.isIn(op, ledger.Unknown), r.executor(r.store))
		before := r.get(op)
		object := func(ref, tenant string, amount int) []byte {
			return []byte(fmt.Sprintf(`{"id":"ch_x","amount":%d,"currency":"EUR","status":"succeeded",
				"metadata":{"order":"order-1","settle_ref":%q,"settle_tenant":%q}}`, amount, ref, tenant))
		}
		for name, c := range map[string]struct {
			object []byte
			want   reconciler.Match
		}{
			"UnknownReference": {object(uuid.NewString(), "acme", 500), reconciler.Unmatched},
			"OtherTenant":      {object(op.RemoteKey, "globex", 500), reconciler.Unmatched},
			"NoTenant":         {object(op.RemoteKey, "", 500), reconciler.Unmatched},
			"NoReference":      {object("", "acme", 500), reconciler.Unmatched},
			"NotJSON":          {[]byte(`{"id":`), reconciler.Unmatched},
			"FieldsDiffer":     {object(op.RemoteKey, "acme", 400), reconciler.Mismatched},
			"Matches":          {object(op.RemoteKey, "acme", 500), reconciler.Matched},
		} {
			t.Run(name, func(t *testing.T) {
				ev, err := reconciler.MatchEvidence(r.ctx, r.store, r.c, c.object)
				if err != nil || ev.Match != c.want {
					t.Fatalf("match = %v (%s), %v; want %v", ev.Match, ev.Why, err, c.want)
				}
				if c.want != reconciler.Unmatched && ev.Operation.ID != op.ID {
					t.Fatal("matched the wrong operation")
				}
			})
		}
		after := r.get(op)
		if after.State != before.State || after.Fence != before.Fence || !after.UpdatedAt.Equal(before.UpdatedAt) {
			t.Fatal("matching evidence changed the operation")
		}
	})
}

// A lookup result that carries settle's reference but names another tenant
// never confirms the operation: it is escalated.
func TestReconciler_LookupOtherTenantEscalates(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "B"}, nil)
		r.sim.Script(sim.FailBeforeCommit) // nothing created by settle
		op := r.create("acme", "order-1", 500)
		r.runUntil("UNKNOWN", r.isIn(op, ledger.Unknown), r.executor(r.store))
		// Another tenant's charge that carries acme's reference.
		body := `{"amount":500,"currency":"EUR","metadata":{"order":"order-1","settle_ref":"` + op.RemoteKey + `","settle_tenant":"globex"}}`
		resp, err := http.Post(r.srv.URL()+"/v1/charges", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		r.runUntil("ESCALATED", r.isIn(op, ledger.Escalated), r.reconciler())
		ev := r.lastEvent(op)
		var evidence map[string]any
		_ = json.Unmarshal(ev.Evidence, &evidence)
		if !strings.Contains(ev.Reason, "does not match") || !strings.Contains(string(ev.Evidence), "settle_tenant") {
			t.Fatalf("reason %q evidence %s", ev.Reason, ev.Evidence)
		}
		if r.get(op).State == ledger.Succeeded {
			t.Fatal("another tenant's object confirmed the operation")
		}
	})
}

// Graceful shutdown: once cancelled the executor claims nothing new, while
// the send in progress finishes and is recorded within the grace period.
func TestExecutor_GracefulShutdown(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "A"}, func(c *target.Contract) {
			c.Timeout = patience // the client waits for the gate
		})
		arrived, open := r.gateCreates()
		op := r.create("acme", "order-1", 500)
		exec := r.executor(r.store)
		exec.Grace = patience // the drain waits for the held send
		ctx, cancel := context.WithCancel(r.ctx)
		returned := make(chan struct{})
		go func() { defer close(returned); _ = exec.Run(ctx) }()
		t.Cleanup(func() { cancel(); open(); <-returned })

		await(t, "the send to reach the target", arrived)
		cancel()
		// Run is draining: new work appears while the send is still held.
		later := r.create("acme", "order-2", 600)
		// An executor that went on claiming while it drained would pick
		// the new operation up at its next idle tick and send it.
		select {
		case <-arrived:
			t.Fatal("the cancelled executor claimed and sent new work")
		case <-returned:
			t.Fatal("Run returned before the send in progress had finished")
		case <-time.After(25 * exec.Idle):
		}
		open()
		await(t, "Run to return", returned)

		if got := r.get(op); got.State != ledger.Succeeded || r.lastEvent(op).Actor != ledger.ActorExecutor {
			t.Fatalf("the send in progress was not recorded on shutdown: %s", got.State)
		}
		if got := r.get(later); got.State != ledger.Prepared || len(r.history(later)) != 1 || r.sim.Requests() != 1 {
			t.Fatalf("a stopped executor claimed new work: %s after %d requests", got.State, r.sim.Requests())
		}
	})
}

func TestExecutor_UnknownTargetEscalates(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "A"}, nil)
		n := ledger.NewOperation{Tenant: "acme", Type: "charge", IntentRef: "x", Target: "retired",
			Payload: []byte(`{"amount":1}`)}
		op, _, err := r.store.Create(context.Background(), n)
		if err != nil {
			t.Fatal(err)
		}
		r.runUntil("ESCALATED", r.isIn(op, ledger.Escalated), r.executor(r.store))
		if r.sim.Requests() != 0 {
			t.Fatal("sent without a contract")
		}
	})
}
