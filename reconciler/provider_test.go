package reconciler_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/storetest"
	"settle/target"
	"settle/target/sim"
)

// tenantParams is a ParamSource a test may change while loops run.
type tenantParams struct {
	mu sync.Mutex
	m  map[string]map[string]string
}

func (p *tenantParams) TenantParams(_ context.Context, tenant string) (map[string]string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]string{}
	for k, v := range p.m[tenant] {
		out[k] = v
	}
	return out, nil
}

func (p *tenantParams) unset(tenant string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.m, tenant)
}

// withAccountHeader makes the rig's target need the tenant parameter
// "account" in a Stripe-Account header, and its client read parameters
// from params.
func (r *rig) withAccountHeader(params *tenantParams) {
	r.c.Headers = []target.Header{{Name: "Stripe-Account", Value: "{tenant.account}"}}
	r.client = target.NewClient(target.ClientOptions{Params: params})
}

func (r *rig) evidence(e ledger.Event) map[string]any {
	r.t.Helper()
	var ev map[string]any
	if err := json.Unmarshal(e.Evidence, &ev); err != nil {
		r.t.Fatal(err)
	}
	return ev
}

// A tenant without the parameter its target needs: the executor escalates
// the operation from IN_FLIGHT, saying what is missing and how to set it,
// and the target never receives a request for it. Another tenant's
// operation, whose parameter is set, is sent with it.
func TestExecutor_MissingTenantParameterIsNeverSent(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "B"}, nil)
		r.withAccountHeader(&tenantParams{m: map[string]map[string]string{"globex": {"account": "acct_globex"}}})
		var (
			mu       sync.Mutex
			accounts []string
		)
		r.proxy(func(w http.ResponseWriter, req *http.Request, next http.Handler) {
			mu.Lock()
			accounts = append(accounts, req.Method+" "+req.Header.Get("Stripe-Account"))
			mu.Unlock()
			next.ServeHTTP(w, req)
		})
		missing := r.create("acme", "order-1", 700)
		sent := r.create("globex", "order-2", 800)
		r.runUntil("both decided", func() bool {
			return r.get(missing).State == ledger.Escalated && r.get(sent).State == ledger.Succeeded
		}, r.executor(r.store))

		if got := r.history(missing); !reflect.DeepEqual(got, []ledger.State{ledger.Prepared, ledger.InFlight, ledger.Escalated}) {
			t.Errorf("history = %v", got)
		}
		e := r.lastEvent(missing)
		const reason = `nothing was sent: tenant acme has no parameter "account", which target payments needs (settle tenant set --tenant acme --param account=…)`
		if e.From != ledger.InFlight || e.Actor != ledger.ActorExecutor || e.Reason != reason {
			t.Errorf("event = %s→%s by %s: %q; want %q", e.From, e.To, e.Actor, e.Reason, reason)
		}
		if ev := r.evidence(e); !reflect.DeepEqual(ev, map[string]any{"sent": false, "missing": []any{"account"}}) {
			t.Errorf("evidence = %v", ev)
		}
		mu.Lock()
		defer mu.Unlock()
		if !reflect.DeepEqual(accounts, []string{"POST acct_globex"}) || r.remote(missing) != 0 || r.remote(sent) != 1 {
			t.Errorf("the target received %q; objects for acme %d, globex %d", accounts, r.remote(missing), r.remote(sent))
		}
	})
}

// lostAnswer makes the next create commit at the target and answer 500,
// then sends op through the executor until it is UNKNOWN.
func (r *rig) lostAnswer(op ledger.Operation, posts *atomic.Int32, later func(w http.ResponseWriter)) {
	r.t.Helper()
	r.proxy(func(w http.ResponseWriter, req *http.Request, next http.Handler) {
		if req.Method != http.MethodPost {
			next.ServeHTTP(w, req)
			return
		}
		if posts.Add(1) == 1 {
			next.ServeHTTP(httptest.NewRecorder(), req) // committed; the answer is lost
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		later(w)
	})
	r.runUntil("UNKNOWN", r.isIn(op, ledger.Unknown), r.executor(r.store))
}

// A same-key replay answered 500 with the target's replayed header is the
// target's saved answer to the first send: another replay would earn it
// again. The window ends, the replay is recorded as replayed, and the next
// round looks the operation up instead, which settles it.
func TestReconciler_ReplayedServerErrorLooksUpNext(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		clk := ledgertest.NewClock()
		r := newRigAt(t, h, sim.Config{Class: "A"}, func(c *target.Contract) {
			c.Idempotency.ReplayedHeader = "Idempotent-Replayed"
		}, clk.Now)
		var posts atomic.Int32
		op := r.create("acme", "order-1", 700)
		r.lostAnswer(op, &posts, func(w http.ResponseWriter) {
			w.Header().Set("Idempotent-Replayed", "true")
			w.WriteHeader(http.StatusInternalServerError)
		})
		rec := r.reconciler()
		rec.Now = clk.Now
		if n := r.reconcileOnce(rec); n != 1 || posts.Load() != 2 {
			t.Fatalf("first round leased %d and made %d creates; want the replay", n, posts.Load())
		}
		got := r.get(op)
		e := r.lastEvent(op)
		ev := r.evidence(e)
		if got.State != ledger.Unknown || !strings.Contains(e.Reason, "saved answer to the first send") ||
			!strings.Contains(e.Reason, "it will be looked up") || ev["replayed"] != true || ev["via"] != "same-key replay" {
			t.Fatalf("after the replay: %s %q evidence %v", got.State, e.Reason, ev)
		}
		if got.RetryWindowEnd.After(clk.Now()) {
			t.Errorf("the replay window still ends at %s (now %s)", got.RetryWindowEnd, clk.Now())
		}
		clk.Advance(time.Second) // past the short delay before the next round
		if n := r.reconcileOnce(rec); n != 1 {
			t.Fatalf("second round leased %d", n)
		}
		if got := r.get(op); got.State != ledger.Succeeded || posts.Load() != 2 || r.remote(op) != 1 {
			t.Fatalf("after the lookup: %s %q; %d creates, %d objects", got.State, got.Reason, posts.Load(), r.remote(op))
		}
	})
}

// failedObjects rewrites the target's lookup answers so that every object
// reads as declined while on is set.
func (r *rig) failedObjects(on *atomic.Bool, posts *atomic.Int32) {
	r.proxy(func(w http.ResponseWriter, req *http.Request, next http.Handler) {
		if req.Method == http.MethodPost {
			if posts.Add(1) == 1 {
				next.ServeHTTP(httptest.NewRecorder(), req)
				w.WriteHeader(http.StatusInternalServerError)
				return
			}
			next.ServeHTTP(w, req)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, req)
		body := rec.Body.Bytes()
		if on.Load() {
			body = bytes.ReplaceAll(body, []byte(`"status":"succeeded"`), []byte(`"status":"declined"`))
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	})
}

// An object the lookup finds whose own status is documented as failed
// ends FAILED_TERMINAL with the object as evidence (found, so not "not
// found alone"); the auditor does not call it a phantom, since it moved
// nothing, and a person cannot confirm it as succeeded.
func TestReconciler_FailedObjectIsNotApplied(t *testing.T) {
	t.Parallel()
	const doc = "https://docs.example.invalid/charges#status"
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "B"}, func(c *target.Contract) {
			c.Response.Statuses = append(c.Response.Statuses, target.StatusRule{Value: "declined", Outcome: target.ObjectFailed, Documentation: doc})
		})
		var (
			declined atomic.Bool
			posts    atomic.Int32
		)
		declined.Store(true)
		r.failedObjects(&declined, &posts)
		op := r.create("acme", "order-1", 700)
		r.runUntil("UNKNOWN", r.isIn(op, ledger.Unknown), r.executor(r.store))
		r.runUntil("FAILED_TERMINAL", r.isIn(op, ledger.FailedTerminal), r.reconciler())

		got := r.get(op)
		e := r.lastEvent(op)
		ev := r.evidence(e)
		objs := r.sim.Objects()
		if len(objs) != 1 || got.RemoteRef != objs[0].ID || ev["remote_id"] != objs[0].ID || ev["object_status"] != "declined" ||
			ev["documentation"] != doc || ev["via"] != "lookup" || !strings.Contains(e.Reason, "documented as failed") {
			t.Fatalf("FAILED_TERMINAL with ref %q, %q, evidence %v; objects %+v", got.RemoteRef, e.Reason, ev, objs)
		}

		a := r.auditor(nil)
		if rep := r.audit(a); rep.Checked != 1 || rep.Phantoms != 0 || !rep.Clean() {
			t.Errorf("audit of a declined object: %+v", rep)
		}

		// The same object read as succeeded would be a phantom: the
		// auditor's check is real.
		declined.Store(false)
		if rep := r.audit(a); rep.Phantoms != 1 {
			t.Errorf("audit of a succeeded object: %+v; want a phantom", rep)
		}
	})
}

// A lookup or replay that cannot be sent (the tenant's parameter was
// removed since the first send) escalates at once, records no send, and
// reaches nothing.
func TestReconciler_NotSentEscalates(t *testing.T) {
	t.Parallel()
	for _, class := range []string{"A", "B"} {
		t.Run(class, func(t *testing.T) {
			t.Parallel()
			storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
				r := newRig(t, h, sim.Config{Class: class}, nil)
				params := &tenantParams{m: map[string]map[string]string{"acme": {"account": "acct_acme"}}}
				r.withAccountHeader(params)
				var posts atomic.Int32
				op := r.create("acme", "order-1", 700)
				r.lostAnswer(op, &posts, func(w http.ResponseWriter) { w.WriteHeader(http.StatusTeapot) })
				before := r.get(op)
				params.unset("acme")
				requests := r.sim.Requests()
				if n := r.reconcileOnce(r.reconciler()); n != 1 {
					t.Fatalf("leased %d", n)
				}
				got := r.get(op)
				e := r.lastEvent(op)
				if got.State != ledger.Escalated || !strings.HasPrefix(e.Reason, `nothing was sent: tenant acme has no parameter "account"`) ||
					r.evidence(e)["sent"] != false {
					t.Fatalf("state %s %q evidence %s", got.State, e.Reason, e.Evidence)
				}
				if r.sim.Requests() != requests || posts.Load() != 1 {
					t.Errorf("the target received %d more requests and %d creates in all", r.sim.Requests()-requests, posts.Load())
				}
				if !reflect.DeepEqual(got.LastSentAt, before.LastSentAt) {
					t.Errorf("last send moved from %v to %v though nothing was sent", before.LastSentAt, got.LastSentAt)
				}
			})
		})
	}
}
