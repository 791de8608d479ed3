package reconciler_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/storetest"
	"settle/target"
	"settle/target/sim"
)

var soak = flag.Bool("soak", false, "run the soak: go test -run Soak -soak -v ./reconciler/")

// TestSoak pushes 5,000 operations of 20 tenants through the simulator with
// faults on 20% of creates, executors killed at random, a sweeper and a
// reconciler, then counts remote effects: zero duplicates, zero lost
// operations, every operation in a state the paper allows.
func TestSoak(t *testing.T) {
	if !*soak {
		t.Skip("the soak runs only with -soak: go test -run Soak -soak -v ./reconciler/")
	}
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		const total, tenants = 5000, 20
		r := newRig(t, h, sim.Config{
			Class: "A", Seed: 7, SlowDelay: 600 * time.Millisecond,
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
		settled := func() (int, map[ledger.State]int) {
			counts := map[ledger.State]int{}
			for _, s := range ledger.States {
				page, err := r.store.List(r.ctx, ledger.ListFilter{Tenant: "tenant-00", State: s, Limit: 500})
				if err == nil {
					counts[s] = len(page.Operations)
				}
			}
			return counts[ledger.Succeeded] + counts[ledger.FailedTerminal] + counts[ledger.Escalated], counts
		}
		deadline := time.Now().Add(5 * time.Minute)
		for {
			all := 0
			for ten := 0; ten < tenants; ten++ {
				for _, s := range []ledger.State{ledger.Prepared, ledger.InFlight, ledger.Unknown} {
					page, err := r.store.List(r.ctx, ledger.ListFilter{Tenant: fmt.Sprintf("tenant-%02d", ten), State: s, Limit: 1})
					if err != nil {
						t.Fatal(err)
					}
					all += len(page.Operations)
				}
			}
			if all == 0 || time.Now().After(deadline) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		cancel()
		_, _ = settled()

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
			case ledger.FailedTerminal:
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
		t.Logf("soak: %d operations, %d tenants, %s, %d executor kills, %d create requests, %d remote objects",
			total, tenants, time.Since(start).Round(time.Second), kills, r.sim.Requests(), len(r.sim.Objects()))
		t.Logf("soak: final states %v", states)
		t.Logf("soak: duplicates %d, lost %d, orphan objects %d, state/effect mismatches %d", duplicates, lost, orphans, wrong)
		if duplicates+lost+orphans+wrong > 0 {
			t.Fatal("the soak found duplicate, lost or mismatched operations")
		}
	})
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
}
