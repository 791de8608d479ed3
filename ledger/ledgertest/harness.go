// Package ledgertest is the conformance suite every ledger.Store must pass,
// run by each adapter's tests against a real database.
package ledgertest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"settle/ledger"
)

// Harness tells the suite how to make stores.
type Harness struct {
	// New returns a fresh, migrated, empty store that reads time from now.
	// It registers its own cleanup.
	New func(t testing.TB, now func() time.Time) ledger.Store
	// Sibling returns another store with its own connections over the same
	// database as s, for tests that race separate pools. Nil when the
	// adapter has no such notion.
	Sibling func(t testing.TB, s ledger.Store, now func() time.Time) ledger.Store
	// RefuseRemoteRef makes s's database refuse (a trigger raising an
	// error) any write that sets an operation's remote_ref to ref: a row
	// that passes every check of the ledger and still fails its statement,
	// for the test that one such row never fails its batch. Nil skips it.
	RefuseRemoteRef func(t testing.TB, s ledger.Store, ref string)
	// RefuseIntentRef makes s's database refuse (a trigger raising an
	// error) the insert of an operation whose intent reference is ref, for
	// the test that one such row never fails its group commit. Nil skips
	// it.
	RefuseIntentRef func(t testing.TB, s ledger.Store, ref string)
	// RefuseCallbacks makes s's database refuse (a trigger raising an
	// error) every insert into the queue of callback notifications, for
	// the test that a transition never commits without its notification.
	// Nil skips it.
	RefuseCallbacks func(t testing.TB, s ledger.Store)
	// Exec runs one statement of the dialect's SQL, without arguments,
	// straight on s's database (its own connection, outside the ledger),
	// for the cases that tamper with rows or check what the schema
	// refuses. Nil skips those cases.
	Exec func(t testing.TB, s ledger.Store, stmt string) error
}

// Clock is a settable clock shared by a test and its stores, and the
// loops the test drives by hand (see NewTimer).
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*timer      // waiting to fire
	wake   chan struct{} // closed when timers change; see WaitTimers
}

// NewClock returns a clock at a fixed instant.
func NewClock() *Clock {
	return &Clock{now: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
}

// NewClockAt returns a clock at t.
func NewClockAt(t time.Time) *Clock { return &Clock{now: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d and fires the timers it passes.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.fire()
}

// fixture bundles what most tests need.
type fixture struct {
	t     *testing.T
	ctx   context.Context
	clk   *Clock
	store ledger.Store
	seq   int
}

// setup makes the fixture of one test, which runs in parallel with its
// siblings: each has its own store.
func setup(t *testing.T, h Harness) *fixture {
	t.Helper()
	t.Parallel()
	clk := NewClock()
	ctx := ledger.NewContextWithActor(context.Background(), testActor)
	return &fixture{t: t, ctx: ctx, clk: clk, store: h.New(t, clk.Now)}
}

// testActor is who acts in a fixture's ctx: the human actions (tokens,
// callbacks, quarantine) need one. Tests of who may act use as.
var testActor = ledger.Actor{Subject: "cli:test", Name: "test", Role: "admin"}

// as returns the fixture's context acting as subject, shown as name, in role.
func (f *fixture) as(subject, name, role string) context.Context {
	return ledger.NewContextWithActor(context.Background(), ledger.Actor{
		Subject: subject, Name: name, Role: role, RequestID: "req-" + subject})
}

// newOp returns a valid NewOperation with a fresh intent for tenant.
func (f *fixture) newOp(tenant string) ledger.NewOperation {
	f.seq++
	return ledger.NewOperation{
		Tenant:      tenant,
		Type:        "charge",
		IntentRef:   fmt.Sprintf("approval-%d", f.seq),
		Target:      "payments",
		Payload:     []byte(fmt.Sprintf(`{"amount": %d, "currency": "EUR", "note": "n%d"}`, 100+f.seq, f.seq)),
		RetryWindow: 24 * time.Hour,
	}
}

// create creates an operation and fails the test on error.
func (f *fixture) create(tenant string) ledger.Operation {
	f.t.Helper()
	op, created, err := f.store.Create(f.ctx, f.newOp(tenant))
	if err != nil || !created {
		f.t.Fatalf("create: created=%v err=%v", created, err)
	}
	return op
}

// claim creates and claims an operation.
func (f *fixture) claim(tenant string) ledger.Operation {
	f.t.Helper()
	op := f.create(tenant)
	got, err := f.store.Claim(f.ctx, op.Tenant, op.ID, op.PayloadHash, time.Minute)
	if err != nil {
		f.t.Fatalf("claim: %v", err)
	}
	return got
}

// unknown drives a new operation to UNKNOWN through lease expiry.
func (f *fixture) unknown(tenant string) ledger.Operation {
	f.t.Helper()
	op := f.claim(tenant)
	f.clk.Advance(time.Minute + time.Second)
	if _, err := f.store.SweepExpired(f.ctx); err != nil {
		f.t.Fatalf("sweep: %v", err)
	}
	return f.get(op)
}

// unknownOn drives a new operation of target to UNKNOWN through lease
// expiry.
func (f *fixture) unknownOn(tenant, target string) ledger.Operation {
	f.t.Helper()
	n := f.newOp(tenant)
	n.Target = target
	op, created, err := f.store.Create(f.ctx, n)
	if err != nil || !created {
		f.t.Fatalf("create: created=%v err=%v", created, err)
	}
	if _, err := f.store.Claim(f.ctx, op.Tenant, op.ID, op.PayloadHash, time.Minute); err != nil {
		f.t.Fatalf("claim: %v", err)
	}
	f.clk.Advance(time.Minute + time.Second)
	if _, err := f.store.SweepExpired(f.ctx); err != nil {
		f.t.Fatalf("sweep: %v", err)
	}
	return f.get(op)
}

// inState drives a new operation to s.
func (f *fixture) inState(tenant string, s ledger.State) ledger.Operation {
	f.t.Helper()
	switch s {
	case ledger.Prepared:
		return f.create(tenant)
	case ledger.InFlight:
		return f.claim(tenant)
	case ledger.Unknown:
		return f.unknown(tenant)
	}
	op := f.claim(tenant)
	return f.record(op, ledger.InFlight, s)
}

// lease leases UNKNOWN operations until it holds op, and returns it.
func (f *fixture) lease(op ledger.Operation) ledger.Operation {
	f.t.Helper()
	leased, err := f.store.LeaseUnknown(f.ctx, 1000, time.Minute)
	if err != nil {
		f.t.Fatalf("lease: %v", err)
	}
	for _, l := range leased {
		if l.ID == op.ID {
			return l
		}
	}
	f.t.Fatalf("lease: %s was not leased", op.ID)
	return op
}

func (f *fixture) record(op ledger.Operation, from, to ledger.State) ledger.Operation {
	f.t.Helper()
	got, err := f.store.Record(f.ctx, outcome(op, from, to))
	if err != nil {
		f.t.Fatalf("record %s → %s: %v", from, to, err)
	}
	return got
}

func outcome(op ledger.Operation, from, to ledger.State) ledger.Outcome {
	o := ledger.Outcome{
		Tenant: op.Tenant, OperationID: op.ID, Fence: op.Fence, From: from, To: to,
		Actor: ledger.ActorExecutor, Reason: "test", Evidence: map[string]any{"status": 200},
	}
	if to == ledger.Succeeded {
		o.RemoteRef = "remote-" + op.ID[:8]
	}
	return o
}

func (f *fixture) get(op ledger.Operation) ledger.Operation {
	f.t.Helper()
	got, err := f.store.Get(f.ctx, op.Tenant, op.ID)
	if err != nil {
		f.t.Fatalf("get: %v", err)
	}
	return got
}

// wantCode fails unless err carries code.
func wantCode(t testing.TB, err error, code ledger.Code) {
	t.Helper()
	if got := ledger.ErrorCode(err); got != code {
		t.Fatalf("error code = %q (%v), want %q", got, err, code)
	}
	var le *ledger.Error
	if code != "" && !errors.As(err, &le) {
		t.Fatalf("error %v is not a *ledger.Error", err)
	}
}

// sameOp fails unless a and b agree on every stored field.
func sameOp(t testing.TB, a, b ledger.Operation) {
	t.Helper()
	if a.ID != b.ID || a.State != b.State || a.Fence != b.Fence || a.Attempts != b.Attempts ||
		string(a.Payload) != string(b.Payload) || string(a.PayloadHash) != string(b.PayloadHash) ||
		a.RemoteKey != b.RemoteKey || a.RemoteRef != b.RemoteRef || !a.UpdatedAt.Equal(b.UpdatedAt) ||
		!timeEq(a.LeaseExpiresAt, b.LeaseExpiresAt) || !timeEq(a.NextReconcileAt, b.NextReconcileAt) {
		t.Fatalf("operation changed:\n got %+v\nwant %+v", b, a)
	}
}

func timeEq(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(*b)
}
