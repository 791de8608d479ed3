package reconciler_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
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
	seq    int // numbers the intents confirmed() creates
}

func newRig(t *testing.T, h ledgertest.Harness, cfg sim.Config, tweak func(c *target.Contract)) *rig {
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
	c.Timeout = 400 * time.Millisecond
	if tweak != nil {
		tweak(c)
	}
	level := slog.LevelError
	if os.Getenv("SETTLE_TEST_LOG") != "" {
		level = slog.LevelDebug
	}
	return &rig{
		t: t, ctx: context.Background(), h: h, store: h.New(t, time.Now), srv: srv, sim: srv.Sim(),
		set: set, c: c, client: target.NewClient(),
		log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})),
	}
}

// create registers an approved charge the way the API does: references
// bound into the payload, the contract's window and deadline.
func (r *rig) create(tenant, intent string, amount int) ledger.Operation {
	r.t.Helper()
	deadline := time.Now().Add(r.c.Deadline)
	op, _, err := r.store.Create(r.ctx, ledger.NewOperation{
		Tenant: tenant, Type: "charge", IntentRef: intent, Target: r.c.Name,
		Payload:     []byte(fmt.Sprintf(`{"amount":%d,"currency":"EUR","metadata":{"order":%q}}`, amount, intent)),
		RetryWindow: r.c.RetryWindow(), Deadline: &deadline, Bind: r.c.Bind,
	})
	if err != nil {
		r.t.Fatal(err)
	}
	return op
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

// runUntil runs loops until cond holds (checked every 20ms) or timeout,
// then stops them and waits. It fails the test on timeout.
func (r *rig) runUntil(what string, timeout time.Duration, cond func() bool, loops ...loop) {
	r.t.Helper()
	ctx, cancel := context.WithCancel(r.ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); reconciler.Run(ctx, toRun(loops)...) }()
	defer func() { cancel(); wg.Wait() }()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			r.t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
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
	r.runUntil("all SUCCEEDED", 10*time.Second, func() bool {
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
