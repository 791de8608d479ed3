package reconciler_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/reconciler"
	"settle/target"
	"settle/target/sim"
)

// rig is one simulated target on loopback, its contract as the simulator
// itself describes it, and a real store.
type rig struct {
	t      *testing.T
	ctx    context.Context
	h      ledgertest.Harness
	store  ledger.Store
	srv    *sim.Server
	sim    *sim.Sim
	set    *target.Set
	c      *target.Contract
	client *target.Client
	log    *slog.Logger
	now    func() time.Time // the store's clock
	seq    int              // numbers the intents confirmed() creates
}

func newRig(t *testing.T, h ledgertest.Harness, cfg sim.Config, tweak func(c *target.Contract)) *rig {
	t.Helper()
	return newRigAt(t, h, cfg, tweak, time.Now)
}

// newRigAt is newRig with a store that reads time from now, for tests that
// move the clock themselves. The simulator keeps wall-clock time.
func newRigAt(t *testing.T, h ledgertest.Harness, cfg sim.Config, tweak func(c *target.Contract), now func() time.Time) *rig {
	t.Helper()
	srv, err := sim.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	set, err := target.Parse("sim.yaml", srv.Contract("payments"))
	if err != nil {
		t.Fatal(err)
	}
	c, _ := set.Get("payments")
	// Long enough that a loaded machine does not turn a plain request into
	// an ambiguous one, and shorter than the rig's 2s leases; a test that
	// needs requests to time out sets its own.
	c.Timeout = 1500 * time.Millisecond
	if tweak != nil {
		tweak(c)
	}
	return &rig{
		t: t, ctx: context.Background(), h: h, store: h.New(t, now), srv: srv, sim: srv.Sim(),
		set: set, c: c, client: target.NewClient(target.ClientOptions{}), now: now,
		log: leakCheckedLog(t),
	}
}

// leakCheckedLog is the rig's logger: every line, at every level, is kept
// and checked when the test ends (invariant 8), so that each fault,
// scenario and class test is also a log-leak test. SETTLE_TEST_LOG=1 also
// prints the lines.
func leakCheckedLog(t *testing.T) *slog.Logger {
	logs := &lockedBuffer{}
	var w io.Writer = logs
	if os.Getenv("SETTLE_TEST_LOG") != "" {
		w = io.MultiWriter(logs, os.Stderr)
	}
	t.Cleanup(func() { checkNoLeak(t, logs.String()) })
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// leaks are what no log line may hold: the rig's payloads' JSON (its
// amount, currency and metadata keys are never a log attribute's form),
// the webhook secret, API tokens (stl_), callback secrets (scs_), an
// Authorization header and the Stripe simulator's key.
var leaks = map[string]string{
	`"amount":`: "payload", `"currency":`: "payload", `"metadata":`: "payload", string(whSecret): "webhook secret",
	"stl_": "API token", "scs_": "callback secret", "Bearer ": "authorization header", "sk_test_": "provider credential",
}

func checkNoLeak(t *testing.T, log string) {
	t.Helper()
	for _, l := range leaked(log) {
		t.Error(l)
	}
}

// leaked describes each leak in log, with the line that holds it.
func leaked(log string) []string {
	var out []string
	for s, what := range leaks {
		// A string attribute is written quoted, its quotes escaped.
		i := strings.Index(log, s)
		if esc := strings.ReplaceAll(s, `"`, `\"`); i < 0 && esc != s {
			i = strings.Index(log, esc)
		}
		if i >= 0 {
			start := strings.LastIndexByte(log[:i], '\n') + 1
			end := strings.IndexByte(log[i:], '\n')
			if end < 0 {
				end = len(log) - i
			}
			out = append(out, fmt.Sprintf("a log line holds a %s (%q):\n%s", what, s, log[start:i+end]))
		}
	}
	return out
}

// lockedBuffer collects a log across goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// newOp is an approved charge as the API registers it: references bound
// into the payload, the contract's window and deadline.
func (r *rig) newOp(tenant, intent string, amount int) ledger.NewOperation {
	deadline := r.now().Add(r.c.Deadline)
	return ledger.NewOperation{
		Tenant: tenant, Type: "charge", IntentRef: intent, Target: r.c.Name,
		Payload:     []byte(fmt.Sprintf(`{"amount":%d,"currency":"EUR","metadata":{"order":%q}}`, amount, intent)),
		RetryWindow: r.c.RetryWindow(), Deadline: &deadline, Bind: r.c.Bind,
	}
}

// create registers one approved charge.
func (r *rig) create(tenant, intent string, amount int) ledger.Operation {
	r.t.Helper()
	op, _, err := r.store.Create(r.ctx, r.newOp(tenant, intent, amount))
	if err != nil {
		r.t.Fatal(err)
	}
	return op
}

// createMany registers n charges, the i-th as spec(i) names it, with eight
// concurrent creators, and returns them in order.
func (r *rig) createMany(n int, spec func(i int) (tenant, intent string, amount int)) []ledger.Operation {
	r.t.Helper()
	ops := make([]ledger.Operation, n)
	errs := make([]error, 8)
	var wg sync.WaitGroup
	for w := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n && errs[w] == nil; i += len(errs) {
				ops[i], _, errs[w] = r.store.Create(r.ctx, r.newOp(spec(i)))
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			r.t.Fatal(err)
		}
	}
	return ops
}

func (r *rig) executor(s ledger.Store) *reconciler.Executor {
	return &reconciler.Executor{Store: s, Contracts: r.set, Client: r.client, Log: r.log,
		Batch: 20, Workers: 8, Lease: 2 * time.Second, Idle: 20 * time.Millisecond, Grace: time.Second}
}

func (r *rig) reconciler() *reconciler.Reconciler {
	return &reconciler.Reconciler{Store: r.store, Contracts: r.set, Client: r.client, Log: r.log,
		Batch: 50, Workers: 8, Lease: 2 * time.Second, Tick: 20 * time.Millisecond,
		MinBackoff: 50 * time.Millisecond, MaxBackoff: 400 * time.Millisecond}
}

func (r *rig) sweeper() *reconciler.Sweeper {
	return &reconciler.Sweeper{Store: r.store, Log: r.log, Tick: 50 * time.Millisecond}
}

type loop interface{ Run(context.Context) error }

// patience bounds every wait in these tests. It is a safety net against a
// hang, never what decides a test: each wait ends on a condition over real
// state, so it may be generous for a loaded machine: under -race
// -count=3 on two busy cores, 200 sends on SQLite took over a minute.
const patience = 3 * time.Minute

// start runs loops in the background and returns stop, which cancels them
// and waits until every one has returned. stop may be called more than
// once; the test's cleanup calls it too.
func (r *rig) start(loops ...loop) (stop func()) {
	ctx, cancel := context.WithCancel(r.ctx)
	done := make(chan struct{})
	go func() { defer close(done); reconciler.Run(ctx, toRun(loops)...) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	r.t.Cleanup(stop)
	return stop
}

// waitFor polls cond every 20ms until it holds, and fails the test if it
// does not within patience.
func (r *rig) waitFor(what string, cond func() bool) {
	r.t.Helper()
	deadline := time.Now().Add(patience)
	for !cond() {
		if time.Now().After(deadline) {
			r.t.Fatalf("timed out after %s waiting for %s", patience, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// runUntil runs loops until cond holds, then stops them and waits for them
// to return. It fails the test if cond does not hold within patience.
func (r *rig) runUntil(what string, cond func() bool, loops ...loop) {
	r.t.Helper()
	stop := r.start(loops...)
	defer stop()
	r.waitFor(what, cond)
}

// proxy puts an HTTP server in front of the simulator and points the
// contract at it, so that every request settle makes (sends and lookups)
// passes through wrap, which hands it on with next.ServeHTTP; nil wrap
// passes every request straight on. Tests use it to hold a request in the
// middle, and close it to know that no request is still on its way to the
// target: Close waits for those in progress and refuses the rest. It must
// not be called while a loop runs.
func (r *rig) proxy(wrap func(w http.ResponseWriter, req *http.Request, next http.Handler)) *httptest.Server {
	r.t.Helper()
	if wrap == nil {
		wrap = func(w http.ResponseWriter, req *http.Request, next http.Handler) { next.ServeHTTP(w, req) }
	}
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		wrap(w, req, r.sim)
	}))
	r.t.Cleanup(front.Close)
	r.c.BaseURL = front.URL
	return front
}

// latch returns a channel that open closes, once; the test's cleanup opens
// it too, so that nothing waits on it for ever.
func (r *rig) latch() (ch <-chan struct{}, open func()) {
	c := make(chan struct{})
	var once sync.Once
	open = func() { once.Do(func() { close(c) }) }
	r.t.Cleanup(open)
	return c, open
}

// heldAnswer lets the target handle req at once but writes its answer only
// once answer is closed, and drops it if the client gives up first.
func heldAnswer(w http.ResponseWriter, req *http.Request, next http.Handler, answer <-chan struct{}) {
	held := httptest.NewRecorder()
	next.ServeHTTP(held, req)
	select {
	case <-answer:
	case <-req.Context().Done():
		return
	}
	maps.Copy(w.Header(), held.Header())
	w.WriteHeader(held.Code)
	_, _ = w.Write(held.Body.Bytes())
}

// gated announces req on arrived, then keeps it from the target until gate
// is closed, and drops it if the client gives up first.
func gated(w http.ResponseWriter, req *http.Request, next http.Handler, arrived chan<- struct{}, gate <-chan struct{}) {
	arrived <- struct{}{}
	select {
	case <-gate:
	case <-req.Context().Done():
		return
	}
	next.ServeHTTP(w, req)
}

// holdAnswers makes the target commit every create at once and hold its
// answer back until release is called (or the client gives up): a sender
// that stalls for exactly as long as the test needs. Lookups pass.
func (r *rig) holdAnswers() (release func()) {
	answer, release := r.latch()
	r.proxy(func(w http.ResponseWriter, req *http.Request, next http.Handler) {
		if req.Method != http.MethodPost {
			next.ServeHTTP(w, req)
			return
		}
		heldAnswer(w, req, next, answer)
	})
	return release
}

// gateCreates keeps every create request from the target, announcing each
// on arrived, until open is called. Lookups pass.
func (r *rig) gateCreates() (arrived <-chan struct{}, open func()) {
	in := make(chan struct{}, 100)
	gate, open := r.latch()
	r.proxy(func(w http.ResponseWriter, req *http.Request, next http.Handler) {
		if req.Method != http.MethodPost {
			next.ServeHTTP(w, req)
			return
		}
		gated(w, req, next, in, gate)
	})
	return in, open
}

// await waits until ch yields or is closed, and fails the test if that does
// not happen within patience.
func await[T any](t *testing.T, what string, ch <-chan T) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(patience):
		t.Fatalf("timed out after %s waiting for %s", patience, what)
	}
}

func toRun(loops []loop) []interface{ Run(context.Context) error } {
	out := make([]interface{ Run(context.Context) error }, len(loops))
	for i, l := range loops {
		out[i] = l
	}
	return out
}

func (r *rig) get(op ledger.Operation) ledger.Operation {
	r.t.Helper()
	got, err := r.store.Get(r.ctx, op.Tenant, op.ID)
	if err != nil {
		r.t.Fatal(err)
	}
	return got
}

func (r *rig) isIn(op ledger.Operation, s ledger.State) func() bool {
	return func() bool { return r.get(op).State == s }
}

// remote counts the simulator's objects carrying op's reference.
func (r *rig) remote(op ledger.Operation) int {
	n := 0
	for _, o := range r.sim.Objects() {
		if o.Reference == op.RemoteKey {
			n++
		}
	}
	return n
}

// history returns the operation's states in order.
func (r *rig) history(op ledger.Operation) []ledger.State {
	evs, err := r.store.Events(r.ctx, op.Tenant, op.ID)
	if err != nil {
		r.t.Fatal(err)
	}
	out := make([]ledger.State, len(evs))
	for i, e := range evs {
		out[i] = e.To
	}
	return out
}

func (r *rig) lastEvent(op ledger.Operation) ledger.Event {
	evs, err := r.store.Events(r.ctx, op.Tenant, op.ID)
	if err != nil {
		r.t.Fatal(err)
	}
	return evs[len(evs)-1]
}

// confirmed creates one operation per tenant named (a tenant may repeat)
// and sends them through the executor until each is SUCCEEDED.
func (r *rig) confirmed(tenants ...string) []ledger.Operation {
	r.t.Helper()
	var ops []ledger.Operation
	for _, tenant := range tenants {
		r.seq++
		ops = append(ops, r.create(tenant, fmt.Sprintf("%s-order-%d", tenant, r.seq), 100+r.seq))
	}
	r.runUntil("all SUCCEEDED", func() bool {
		for _, op := range ops {
			if r.get(op).State != ledger.Succeeded {
				return false
			}
		}
		return true
	}, r.executor(r.store))
	for i := range ops {
		ops[i] = r.get(ops[i])
	}
	return ops
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}
