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
	"settle/target"
	"settle/target/sim"
)

// TestSoak pushes 5,000 operations of 20 tenants through the simulator with
// faults on 20% of creates, executors killed at random, a sweeper and a
// reconciler, then counts remote effects: zero duplicates, zero lost
// operations, every operation in a state the paper allows.
func TestSoak(t *testing.T) {
	if os.Getenv("SETTLE_SOAK") == "" {
		t.Skip("the soak runs only with SETTLE_SOAK=1: SETTLE_SOAK=1 go test -run Soak -v -timeout 20m ./reconciler/")
	}
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		// Class A resolves by same-key replay; class B has no idempotency
		// keys, so any second send would show as a duplicate object.
		for _, class := range []string{"A", "B"} {
			t.Run("Class"+class, func(t *testing.T) { soakOnce(t, h, class) })
		}
	})
}

func soakOnce(t *testing.T, h ledgertest.Harness, class string) {
	{
		const total, tenants = 5000, 20
		r := newRig(t, h, sim.Config{
			Class: class, Seed: 7, SlowDelay: 600 * time.Millisecond,
			DropAfterCommit: 0.05, FailAfterCommit: 0.05, FailBeforeCommit: 0.04, Slow: 0.03, Reset: 0.03,
		}, func(c *target.Contract) { c.Timeout = 400 * time.Millisecond })
		start := time.Now()
		ops := make([]ledger.Operation, total)
		var wg sync.WaitGroup
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := w; i < total; i += 8 {
					ops[i] = r.create(fmt.Sprintf("tenant-%02d", i%tenants), fmt.Sprintf("intent-%d", i), 100+i%977)
				}
			}(w)
		}
		wg.Wait()

		ctx, cancel := context.WithCancel(r.ctx)
		defer cancel()
		rec := r.reconciler()
		go func() { _ = rec.Run(ctx) }()
		go func() { _ = r.sweeper().Run(ctx) }()
		// Executors live for a random while and are killed with little or
		// no grace, abandoning sends in progress to lease expiry.
		kills := 0
		go func() {
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
		// Done when nothing is PREPARED or IN_FLIGHT and every UNKNOWN
		// operation has no remote object (one that has will be confirmed).
		done := func() bool {
			objs := map[string]bool{}
			for _, o := range r.sim.Objects() {
				objs[o.Reference] = true
			}
			for _, op := range ops {
				switch got := r.get(op); got.State {
				case ledger.Prepared, ledger.InFlight:
					return false
				case ledger.Unknown:
					if objs[got.RemoteKey] {
						return false
					}
				}
			}
			return true
		}
		deadline := time.Now().Add(5 * time.Minute)
		for !done() {
			if time.Now().After(deadline) {
				t.Error("the soak did not settle in 5 minutes")
				break
			}
			time.Sleep(500 * time.Millisecond)
		}
		cancel()

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
		t.Logf("soak class %s: %d operations, %d tenants, %s, %d executor kills, %d create requests, %d remote objects",
			class, total, tenants, time.Since(start).Round(time.Second), kills, r.sim.Requests(), len(r.sim.Objects()))
		t.Logf("soak: final states %v", states)
		t.Logf("soak: duplicates %d, lost %d, orphan objects %d, state/effect mismatches %d", duplicates, lost, orphans, wrong)
		if duplicates+lost+orphans+wrong > 0 {
			t.Fatal("the soak found duplicate, lost or mismatched operations")
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
}
