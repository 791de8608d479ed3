package reconciler_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/storetest"
	"settle/reconciler"
	"settle/target"
	"settle/target/sim"
)

// TestSoak pushes 5,000 operations of 20 tenants through the simulator with
// faults on 20% of creates, executors killed at random, a sweeper and a
// reconciler, then counts remote effects: zero duplicates, zero lost
// operations, every operation in a state the paper allows. It runs serially:
// its figures are only meaningful with the machine to itself.
func TestSoak(t *testing.T) {
	if os.Getenv("SETTLE_SOAK") == "" {
		t.Skip("the soak runs only with SETTLE_SOAK=1: SETTLE_SOAK=1 go test -run Soak -v -timeout 30m ./reconciler/")
	}
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		// Class A resolves by same-key replay; class B has no idempotency
		// keys, so any second send would show as a duplicate object.
		for _, class := range []string{"A", "B"} {
			t.Run("Class"+class, func(t *testing.T) { soakOnce(t, h, class) })
		}
	})
}

const soakTenants = 20

func soakOnce(t *testing.T, h ledgertest.Harness, class string) {
	const total = 5000
	r := newRig(t, h, sim.Config{
		Class: class, Seed: 7, SlowDelay: 600 * time.Millisecond,
		DropAfterCommit: 0.05, FailAfterCommit: 0.05, FailBeforeCommit: 0.04, Slow: 0.03, Reset: 0.03,
	}, func(c *target.Contract) { c.Timeout = 400 * time.Millisecond })
	// Every request reaches the target through a front that the audit
	// closes first: a send its client gave up on may still be committing,
	// and Close waits for it.
	front := r.proxy(nil)
	start := time.Now()
	ops := r.createMany(total, func(i int) (string, string, int) {
		return fmt.Sprintf("tenant-%02d", i%soakTenants), fmt.Sprintf("intent-%d", i), 100 + i%977
	})

	// About 7% of class B operations never reach the target and stay
	// UNKNOWN for good; with the rig's 400ms ceiling on backoff the
	// reconciler would look them up twice a second each, and on SQLite's
	// single writer that leaves the executors too little room to send.
	reconcile := func() *reconciler.Reconciler {
		rec := r.reconciler()
		rec.MaxBackoff = 3 * time.Second
		return rec
	}

	ctx, cancel := context.WithCancel(r.ctx)
	defer cancel()
	var (
		loops sync.WaitGroup
		kills int // the killer's own; read after loops.Wait
	)
	loops.Add(3)
	go func() { defer loops.Done(); _ = reconcile().Run(ctx) }()
	go func() { defer loops.Done(); _ = r.sweeper().Run(ctx) }()
	// Executors live for a random while and are killed with little or no
	// grace, abandoning sends in progress to lease expiry.
	go func() {
		defer loops.Done()
		rng := rand.New(rand.NewPCG(1, 2))
		for ctx.Err() == nil {
			ectx, stop := context.WithCancel(ctx)
			exec := r.executor(r.store)
			exec.Lease, exec.Grace = time.Second, time.Duration(rng.IntN(2))*50*time.Millisecond
			done := make(chan struct{})
			go func() { _ = exec.Run(ectx); close(done) }()
			sleepCtx(ctx, time.Duration(100+rng.IntN(700))*time.Millisecond)
			stop()
			<-done
			kills++
		}
	}()
	deadline := time.Now().Add(8 * time.Minute)
	for !r.soakSettled() {
		if time.Now().After(deadline) {
			t.Error("the soak did not settle in 8 minutes")
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	// Quiesce: every loop has returned (with its verdicts recorded) and no
	// request is still on its way to the target.
	cancel()
	loops.Wait()
	front.Close()
	chaos := time.Since(start)

	// The check above ran while everything moved. Now that nothing does,
	// an UNKNOWN operation whose charge exists (committed by a send its
	// client had given up on) is reconciled until it is confirmed, and the
	// state is checked again with everything stopped.
	rounds := 0
	for !t.Failed() && !r.soakSettled() {
		if rounds++; rounds > 5 {
			t.Error("the soak did not settle in 5 quiet rounds")
			break
		}
		front = r.proxy(nil)
		r.runUntil("the quiet round to settle", r.soakSettled, reconcile(), r.sweeper())
		front.Close()
	}

	// The audit, with everything stopped.
	byRef := map[string][]sim.Object{}
	for _, o := range r.sim.Objects() {
		byRef[o.Reference] = append(byRef[o.Reference], o)
	}
	states := map[ledger.State]int{}
	duplicates, lost, orphans, wrong := 0, 0, 0, 0
	known := map[string]bool{}
	for _, op := range ops {
		got := r.get(op)
		states[got.State]++
		known[got.RemoteKey] = true
		objs := byRef[got.RemoteKey]
		if len(objs) > 1 {
			duplicates++
		}
		switch got.State {
		case ledger.Succeeded:
			if len(objs) != 1 || objs[0].ID != got.RemoteRef {
				wrong++
			}
		case ledger.FailedTerminal, ledger.Unknown:
			if len(objs) != 0 {
				wrong++
			}
		case ledger.Prepared, ledger.InFlight:
			lost++
		}
	}
	for ref := range byRef {
		if !known[ref] {
			orphans++
		}
	}
	t.Logf("soak class %s: %d operations, %d tenants, %s (%s until quiet, %d quiet rounds), %d executor kills, %d create requests, %d remote objects",
		class, total, soakTenants, time.Since(start).Round(time.Second), chaos.Round(time.Second), rounds, kills,
		r.sim.Requests(), len(r.sim.Objects()))
	t.Logf("soak: final states %v", states)
	t.Logf("soak: duplicates %d, lost %d, orphan objects %d, state/effect mismatches %d", duplicates, lost, orphans, wrong)
	if duplicates+lost+orphans+wrong > 0 {
		t.Fatal("the soak found duplicate, lost or mismatched operations")
	}
}

// soakSettled reports whether nothing is PREPARED or IN_FLIGHT and no
// UNKNOWN operation has a remote object (one that has will be confirmed).
// It reads the ledger by state, a page at a time, rather than operation by
// operation.
func (r *rig) soakSettled() bool {
	objs := map[string]bool{}
	for _, o := range r.sim.Objects() {
		objs[o.Reference] = true
	}
	for i := range soakTenants {
		for _, s := range []ledger.State{ledger.Prepared, ledger.InFlight, ledger.Unknown} {
			for f := (ledger.ListFilter{Tenant: fmt.Sprintf("tenant-%02d", i), State: s, Limit: ledger.MaxListLimit}); ; {
				page, err := r.store.List(r.ctx, f)
				if err != nil {
					r.t.Fatal(err)
				}
				for _, op := range page.Operations {
					if s != ledger.Unknown || objs[op.RemoteKey] {
						return false
					}
				}
				if f.Cursor = page.Next; f.Cursor == "" {
					break
				}
			}
		}
	}
	return true
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
