// Package drill runs the paper's fault-injection tests ("Fault-injection
// tests to run before release") against one target, with settle's real
// components: the store, target.Client, the executor's send, the sweeper's
// lease expiry, the reconciler and the inbox. Faults are injected on
// settle's own side of the connection (see faults), so a drill needs
// nothing from the target beyond its contract: the simulator or a vendor's
// sandbox.
//
// A drill never runs settle's loops, which would claim any tenant's
// operations: it claims, sends, records and reconciles only its own, by
// id, in a dedicated tenant. Its UNKNOWN operations are recorded as due
// far ahead, so that a settle serve on the same database leaves them to
// the drill while it reconciles them itself.
package drill

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"settle/gonogo"
	"settle/ledger"
	"settle/reconciler"
	"settle/target"
)

// Store is what a drill needs of a ledger store.
type Store interface {
	ledger.Store
	ledger.InboxStore
	ledger.DrillStore
}

// DefaultPayload is the approved payload of the drill's operations unless
// Config.Payload names another: a small charge as the simulator takes it.
// A vendor's sandbox usually needs its own (settle drill --payload FILE).
const DefaultPayload = `{"amount": 100, "currency": "EUR", "description": "settle drill"}`

// Config is one drill against one target.
type Config struct {
	Store    Store
	Contract *target.Contract
	// Secrets are the targets' credentials and Params the tenant
	// parameters (the store, usually), as settle serve passes them.
	Secrets *target.Secrets
	Params  target.ParamSource
	Log     *slog.Logger
	Tenant  string // the drill's own tenant (default "drill")
	Payload []byte // approved payload of every drill operation (default DefaultPayload)
	Version string // the settle build, stored with the results
	Now     func() time.Time
	// Lease is the claim lease of test 2, whose worker is "killed": the
	// test waits it out (default 2s).
	Lease time.Duration
	// Patience bounds each wait for a state (default 2m).
	Patience time.Duration
	// Poll is the pause between reconciliation rounds and lease checks
	// (default 200ms).
	Poll time.Duration
}

// drill is one run in progress.
type drill struct {
	Config
	c     *target.Contract
	run   string
	seq   int
	inbox *reconciler.Inbox
}

// Run runs every test of gonogo.Tests in order, stores the results as one
// run, and returns them. An error means the run could not be stored or a
// test could not be carried out at all (the database failed): nothing
// about the target follows from it. A test that fails is a result, not an
// error.
func Run(ctx context.Context, cfg Config) ([]ledger.DrillResult, error) {
	d := &drill{Config: cfg, c: cfg.Contract}
	if d.Tenant == "" {
		d.Tenant = "drill"
	}
	if !ledger.ValidTenant(d.Tenant) {
		return nil, ledger.Errorf(ledger.EInvalid, "drill tenant %q is not a valid tenant name", d.Tenant)
	}
	if len(d.Payload) == 0 {
		d.Payload = []byte(DefaultPayload)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Lease <= 0 {
		d.Lease = 2 * time.Second
	}
	if d.Patience <= 0 {
		d.Patience = 2 * time.Minute
	}
	if d.Poll <= 0 {
		d.Poll = 200 * time.Millisecond
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	d.inbox = &reconciler.Inbox{Store: d.Store, Inbox: d.Store, Contracts: one{d.c}, Log: d.Log, Now: d.Now}
	d.run = d.Now().UTC().Format("20060102T150405Z") + "-" + randomHex(4)

	tests := map[int]func(context.Context) result{
		1: d.responseLost, 2: d.workerKilled, 3: d.claimRace, 4: d.payloadChanged,
		5: d.lookupLag, 6: d.inboundUnmatched, 7: d.legitimateRepeat,
	}
	var out []ledger.DrillResult
	for _, t := range gonogo.Tests {
		r := tests[t.Number](ctx)
		if r.err != nil {
			return out, fmt.Errorf("drill test %d %s: %w", t.Number, t.Name, r.err)
		}
		if r.evidence == nil {
			r.evidence = map[string]any{}
		}
		// Which deployment of the target was drilled (a sandbox, the
		// simulator): the gate shows it beside the result.
		r.evidence["base_url"] = d.c.BaseURL
		out = append(out, ledger.DrillResult{RunID: d.run, Target: d.c.Name, Number: t.Number, Name: t.Name,
			Passed: r.passed, NotApplicable: r.na, Reason: r.reason, Evidence: r.evidence,
			RanAt: d.Now().UTC(), Version: d.Version})
		d.Log.Info("test done", "component", "drill", "target", d.c.Name, "test", t.Name, "passed", r.passed, "not_applicable", r.na)
	}
	// One time for the whole run: it is the run's date the gate weighs.
	for i := range out {
		out[i].RanAt = out[len(out)-1].RanAt
	}
	if err := d.Store.RecordDrill(ctx, out); err != nil {
		return out, fmt.Errorf("store drill results: %w", err)
	}
	return out, nil
}

// result is one test's verdict; err means the test could not be carried
// out (a database error), which is not a verdict on the target.
type result struct {
	passed, na bool
	reason     string
	evidence   map[string]any
	err        error
}

func pass(reason string, ev map[string]any) result {
	return result{passed: true, reason: reason, evidence: ev}
}
func fail(reason string, ev map[string]any) result { return result{reason: reason, evidence: ev} }
func broken(err error) result                      { return result{err: err} }

// notApplicable is a test the target cannot take; safe says whether the
// missing capability leaves nothing to prove (see docs/runbook.md).
func notApplicable(safe bool, reason string) result {
	return result{passed: safe, na: true, reason: reason, evidence: map[string]any{"not_applicable": true}}
}

// one is a contract set of the drilled target only, so that no component
// of the drill acts on another target.
type one struct{ c *target.Contract }

func (o one) Get(name string) (*target.Contract, bool) {
	if name == o.c.Name {
		return o.c, true
	}
	return nil, false
}
func (o one) Names() []string { return []string{o.c.Name} }

// rig is the real components over a fault-injecting transport.
type rig struct {
	f    *faults
	cl   *target.Client
	exec *reconciler.Executor
	rec  *reconciler.Reconciler
}

func (d *drill) rig() *rig {
	f := &faults{c: d.c}
	cl := target.NewClient(target.ClientOptions{Secrets: d.Secrets, Params: d.Params,
		WrapTransport: func(next http.RoundTripper) http.RoundTripper { f.next = next; return f }})
	return &rig{f: f, cl: cl,
		exec: &reconciler.Executor{Store: d.Store, Contracts: one{d.c}, Client: cl, Log: d.Log},
		rec:  &reconciler.Reconciler{Store: d.Store, Contracts: one{d.c}, Client: cl, Log: d.Log, Now: d.Now},
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// intent is a fresh intent reference of this run.
func (d *drill) intent(what string) string {
	d.seq++
	return fmt.Sprintf("drill-%s-%d-%s", d.run, d.seq, what)
}

func (d *drill) newOp(intent string, payload []byte, window time.Duration) ledger.NewOperation {
	deadline := d.Now().Add(d.c.Deadline)
	return ledger.NewOperation{Tenant: d.Tenant, Type: "drill", IntentRef: intent, Target: d.c.Name,
		Payload: payload, RetryWindow: window, Deadline: &deadline, Bind: d.c.Bind}
}

// create registers an approved drill operation.
func (d *drill) create(ctx context.Context, what string) (ledger.Operation, error) {
	op, _, err := d.Store.Create(ctx, d.newOp(d.intent(what), d.Payload, d.c.RetryWindow()))
	if err != nil {
		return op, fmt.Errorf("create drill operation: %w", err)
	}
	return op, nil
}

// claim claims op for sending; lease 0 is the target's own.
func (d *drill) claim(ctx context.Context, op ledger.Operation, lease time.Duration) (ledger.Operation, error) {
	if lease <= 0 {
		lease = d.c.Lease()
	}
	got, err := d.Store.Claim(ctx, op.Tenant, op.ID, op.PayloadHash, lease)
	if err != nil {
		return got, fmt.Errorf("claim drill operation (is a settle serve sending the drill tenant's operations?): %w", err)
	}
	return got, nil
}

// record applies a verdict. An UNKNOWN one is due far ahead, so that no
// reconciler of a settle serve on the same database takes it while the
// drill reconciles it itself.
func (d *drill) record(ctx context.Context, out ledger.Outcome) (ledger.Operation, error) {
	if out.To == ledger.Unknown {
		later := d.Now().Add(time.Hour)
		out.NextAt = &later
	}
	op, err := d.Store.Record(ctx, out)
	if err != nil {
		return op, fmt.Errorf("record drill verdict: %w", err)
	}
	return op, nil
}

// execute claims, sends and records op with r, then reconciles it until it
// is final: what settle serve does for an operation.
func (d *drill) execute(ctx context.Context, r *rig, op ledger.Operation) (ledger.Operation, error) {
	claimed, err := d.claim(ctx, op, 0)
	if err != nil {
		return op, err
	}
	got, err := d.record(ctx, r.exec.Send(ctx, claimed))
	if err != nil {
		return got, err
	}
	return d.reconcile(ctx, r, got, 0)
}

// reconcile runs the reconciler over op by id until op is final, or
// rounds rounds have passed (0: until final, within Patience). It returns
// the operation as it stands.
func (d *drill) reconcile(ctx context.Context, r *rig, op ledger.Operation, rounds int) (ledger.Operation, error) {
	deadline := time.Now().Add(d.Patience)
	for n := 0; op.State == ledger.Unknown && (rounds == 0 || n < rounds); n++ {
		leased, err := d.Store.LeaseOperation(ctx, op.Tenant, op.ID, time.Minute)
		switch {
		case ledger.ErrorCode(err) == ledger.EStaleFence:
			// Another reconciler holds it (a settle serve's, after the
			// sweeper made it due); its verdict counts as much as ours.
		case err != nil:
			return op, fmt.Errorf("lease drill operation: %w", err)
		default:
			if _, err := d.record(ctx, r.rec.Resolve(ctx, leased)); err != nil && ledger.ErrorCode(err) != ledger.EStaleFence {
				return op, err
			}
		}
		if op, err = d.Store.Get(ctx, op.Tenant, op.ID); err != nil {
			return op, fmt.Errorf("read drill operation: %w", err)
		}
		if op.State != ledger.Unknown || (rounds > 0 && n+1 >= rounds) {
			break
		}
		if time.Now().After(deadline) {
			return op, nil
		}
		if err := pause(ctx, d.Poll); err != nil {
			return op, err
		}
	}
	return op, nil
}

func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// remoteObjects counts the target's objects carrying op's reference, by
// lookup with the plain client: -1 and why when it cannot tell.
func (d *drill) remoteObjects(ctx context.Context, r *rig, op ledger.Operation) (int, string) {
	if !d.c.HasLookup() {
		return -1, "the target has no lookup by reference"
	}
	a := r.cl.Lookup(ctx, d.c, op.Tenant, op.RemoteKey, op.RemoteRef)
	switch {
	case !a.Sent():
		return -1, "the lookup was not sent: " + a.NotSent
	case !a.Answered():
		return -1, "the lookup got no response: " + a.Failure
	case a.Status != http.StatusOK:
		return -1, fmt.Sprintf("the lookup answered %d", a.Status)
	}
	res, err := d.c.Results(a.Body)
	if err != nil {
		return -1, "the lookup answer is unreadable"
	}
	return len(res), ""
}
