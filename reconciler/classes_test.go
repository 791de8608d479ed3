package reconciler_test

import (
	"io"
	"net/http"
	"net/http/httptest"
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

// A 409 "same key still executing" is waited out and retried only with the
// same key and the same bytes, until the original answer is replayed. The
// first request stays executing at the target until a replay has met its
// 409: however slow the machine, the replay cannot arrive too late.
func TestReconciler_SameKeyInProgressWaits(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "A", ConflictOnConcurrent: true},
			func(c *target.Contract) { c.Timeout = 2 * time.Second })
		conflicted, sawConflict := r.latch()
		var posts atomic.Int32
		r.proxy(func(w http.ResponseWriter, req *http.Request, next http.Handler) {
			switch {
			case req.Method != http.MethodPost:
				next.ServeHTTP(w, req)
			case posts.Add(1) == 1:
				// The target commits, then cannot write its answer: the
				// key stays executing.
				next.ServeHTTP(stalledWriter{w, conflicted}, req)
			default:
				sw := &statusWriter{ResponseWriter: w}
				next.ServeHTTP(sw, req)
				if sw.status == http.StatusConflict {
					sawConflict()
				}
			}
		})
		op := r.create("acme", "order-1", 500)
		exec := r.executor(r.store)
		exec.Lease = 300 * time.Millisecond // the first send outlives its lease
		r.runUntil("SUCCEEDED", r.isIn(op, ledger.Succeeded), exec, r.sweeper(), r.reconciler())
		evs, _ := r.store.Events(r.ctx, op.Tenant, op.ID)
		waited := false
		for _, e := range evs {
			waited = waited || strings.Contains(e.Reason, "still executing")
		}
		if !waited {
			t.Fatalf("no 409 was waited out: %+v", evs)
		}
		objs := r.sim.Objects()
		if len(objs) != 1 || objs[0].IdempotencyKey != op.RemoteKey || r.sim.Requests() < 2 {
			t.Fatalf("objects %+v after %d requests", objs, r.sim.Requests())
		}
	})
}

// stalledWriter holds a handler's answer until release closes.
type stalledWriter struct {
	http.ResponseWriter
	release <-chan struct{}
}

func (w stalledWriter) WriteHeader(code int) { <-w.release; w.ResponseWriter.WriteHeader(code) }

func (w stalledWriter) Write(b []byte) (int, error) { <-w.release; return w.ResponseWriter.Write(b) }

// Past its deadline an unresolved operation is escalated to its owner.
func TestReconciler_DeadlineEscalates(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "B"}, func(c *target.Contract) { c.Deadline = 500 * time.Millisecond })
		r.sim.Script(sim.FailBeforeCommit)
		op := r.create("acme", "order-1", 500)
		r.runUntil("ESCALATED", r.isIn(op, ledger.Escalated), r.executor(r.store), r.reconciler())
		got := r.get(op)
		if !strings.Contains(got.Reason, "past its deadline") || !strings.Contains(got.Reason, "Simulator team") {
			t.Fatalf("reason %q must name the deadline and the owning team", got.Reason)
		}
	})
}

// Class D: no key, no lookup, no precondition: escalate at once, never
// resend.
func TestReconciler_ClassDEscalates(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "D"}, nil)
		r.sim.Script(sim.DropAfterCommit)
		op := r.create("acme", "order-1", 500)
		r.runUntil("ESCALATED", r.isIn(op, ledger.Escalated), r.executor(r.store), r.reconciler())
		if r.sim.Requests() != 1 || !strings.Contains(r.get(op).Reason, "no way to confirm") {
			t.Fatalf("%d requests, reason %q", r.sim.Requests(), r.get(op).Reason)
		}
	})
}

// versioned is a tiny class C target on loopback: an update guarded by
// If-Match. The first request commits and drops its answer.
type versioned struct {
	mu      sync.Mutex
	version string
	seen    []string // If-Match values received
}

func (v *versioned) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	v.mu.Lock()
	defer v.mu.Unlock()
	_, _ = io.ReadAll(r.Body)
	v.seen = append(v.seen, r.Header.Get("If-Match"))
	if r.Header.Get("If-Match") != v.version {
		w.WriteHeader(http.StatusPreconditionFailed)
		return
	}
	v.version = "v2" // applied
	if len(v.seen) == 1 {
		hj, _ := w.(http.Hijacker)
		conn, _, _ := hj.Hijack()
		conn.Close() // committed, answer lost
		return
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(`{"id":"res-1","plan":"gold"}`))
}

const classCYAML = `
targets:
  - name: plans
    owner: {team: Platform team, escalation_contact: platform@example.invalid}
    documentation: {url: "https://docs.example.invalid/plans", checked: 2026-11-01}
    base_url: BASE
    timeout: 1s
    deadline: 1h
    create: {method: PUT, path: /resources/res-1}
    conditional_update: {header: If-Match, version_field: expected_version}
    outcomes:
      - {status: 200, outcome: succeeded}
      - {status: 412, outcome: unknown}
    response: {id_field: id, match: [plan]}
`

// Class C: the resend carries the expected version; the first attempt had
// applied, so the target refuses it (412) and the operation is escalated
// for a person to confirm — never applied twice.
func TestReconciler_ClassCConditionalResend(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		v := &versioned{version: "v1"}
		srv := httptest.NewServer(v)
		t.Cleanup(srv.Close)
		set, err := target.Parse("c.yaml", []byte(strings.Replace(classCYAML, "BASE", srv.URL, 1)))
		if err != nil {
			t.Fatal(err)
		}
		r := newRig(t, h, sim.Config{Class: "D"}, nil)
		r.set = set
		op, _, err := r.store.Create(r.ctx, ledger.NewOperation{Tenant: "acme", Type: "upgrade", IntentRef: "u-1",
			Target: "plans", Payload: []byte(`{"plan":"gold","expected_version":"v1"}`)})
		if err != nil {
			t.Fatal(err)
		}
		r.runUntil("ESCALATED", r.isIn(op, ledger.Escalated), r.executor(r.store), r.reconciler())
		v.mu.Lock()
		defer v.mu.Unlock()
		if len(v.seen) != 2 || v.seen[0] != "v1" || v.seen[1] != "v1" || v.version != "v2" {
			t.Fatalf("If-Match sent %v, version %s", v.seen, v.version)
		}
		if !strings.Contains(r.get(op).Reason, "precondition failed") {
			t.Fatalf("reason %q", r.get(op).Reason)
		}
	})
}
