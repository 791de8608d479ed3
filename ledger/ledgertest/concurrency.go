package ledgertest

import (
	"sync"
	"testing"
	"time"

	"settle/ledger"
)

// stores returns the fixture's store plus, where the adapter supports it,
// three more with their own connection pools over the same database.
func (f *fixture) stores(h Harness) []ledger.Store {
	out := []ledger.Store{f.store}
	if h.Sibling != nil {
		for i := 0; i < 3; i++ {
			out = append(out, h.Sibling(f.t, f.store, f.clk.Now))
		}
	}
	return out
}

// drain runs step in workers goroutines over the fixture's stores and
// their siblings until each gets nothing, and returns how many times each
// operation came back; it fails the test on an error or on an operation
// that fails ok.
func (f *fixture) drain(h Harness, workers int, step func(ledger.Store) ([]ledger.Operation, error),
	ok func(ledger.Operation) bool) map[string]int {
	f.t.Helper()
	stores := f.stores(h)
	var (
		mu   sync.Mutex
		got  = map[string]int{}
		wg   sync.WaitGroup
		errs []error
	)
	for g := 0; g < workers; g++ {
		wg.Add(1)
		go func(s ledger.Store) {
			defer wg.Done()
			for {
				ops, err := step(s)
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				}
				for _, op := range ops {
					got[op.ID]++
					if !ok(op) {
						errs = append(errs, ledger.Errorf(ledger.EInternal, "got %s at fence %d", op.State, op.Fence))
					}
				}
				mu.Unlock()
				if err != nil || len(ops) == 0 {
					return
				}
			}
		}(stores[g%len(stores)])
	}
	wg.Wait()
	if len(errs) > 0 {
		f.t.Fatal(errs[0])
	}
	return got
}

func testConcurrency(t *testing.T, h Harness) {
	// Fault-injection test 3: two (here 64) workers race to claim the same
	// operation; exactly one may send.
	t.Run("ExactlyOneSender", func(t *testing.T) {
		f := setup(t, h)
		stores := f.stores(h)
		for round := 0; round < 10; round++ {
			op := f.create("acme")
			var (
				start   = make(chan struct{})
				wg      sync.WaitGroup
				mu      sync.Mutex
				winners []int64
				errs    []error
			)
			for g := 0; g < 64; g++ {
				wg.Add(1)
				go func(s ledger.Store) {
					defer wg.Done()
					<-start
					got, err := s.Claim(f.ctx, op.Tenant, op.ID, op.PayloadHash, time.Minute)
					mu.Lock()
					defer mu.Unlock()
					if err == nil {
						winners = append(winners, got.Fence)
						return
					}
					if c := ledger.ErrorCode(err); c != ledger.EInvalidTransition && c != ledger.EStaleFence {
						errs = append(errs, err)
					}
				}(stores[g%len(stores)])
			}
			close(start)
			wg.Wait()
			if len(errs) > 0 {
				t.Fatalf("unexpected claim errors: %v", errs[0])
			}
			if len(winners) != 1 || winners[0] != 1 {
				t.Fatalf("round %d: %d claimers got a fence (%v), want exactly one", round, len(winners), winners)
			}
			if got := f.get(op); got.Attempts != 1 || got.Fence != 1 {
				t.Fatalf("after the race: attempts %d fence %d", got.Attempts, got.Fence)
			}
		}
	})

	t.Run("BatchClaimsEachOnce", func(t *testing.T) {
		f := setup(t, h)
		const total = 1000
		want := map[string]bool{}
		for i := 0; i < total; i++ {
			want[f.create([]string{"acme", "globex", "initech"}[i%3]).ID] = true
		}
		claimed := f.drain(h, 8, func(s ledger.Store) ([]ledger.Operation, error) {
			return s.ClaimBatch(f.ctx, 37, time.Minute)
		}, func(op ledger.Operation) bool { return op.Fence == 1 && op.State == ledger.InFlight })
		if len(claimed) != total {
			t.Fatalf("claimed %d distinct operations, want %d", len(claimed), total)
		}
		for id, n := range claimed {
			if n != 1 || !want[id] {
				t.Fatalf("operation %s claimed %d times", id, n)
			}
		}
		if left, _ := f.store.ClaimBatch(f.ctx, total, time.Minute); len(left) != 0 {
			t.Fatalf("%d operations were left PREPARED", len(left))
		}
	})

	// Reconcilers on several replicas lease the due UNKNOWN operations at
	// once: each is leased by one of them, once, and none is left behind.
	t.Run("LeaseEachOnce", func(t *testing.T) {
		f := setup(t, h)
		const total = 300
		for i := 0; i < total; i++ {
			f.create([]string{"acme", "globex", "initech"}[i%3])
		}
		for {
			got, err := f.store.ClaimBatch(f.ctx, 500, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 {
				break
			}
		}
		f.clk.Advance(2 * time.Minute)
		if n, err := f.store.SweepExpired(f.ctx); err != nil || n != total {
			t.Fatalf("swept %d, %v", n, err)
		}
		leased := f.drain(h, 8, func(s ledger.Store) ([]ledger.Operation, error) {
			return s.LeaseUnknown(f.ctx, 17, time.Minute)
		}, func(op ledger.Operation) bool { return op.Fence == 2 && op.State == ledger.Unknown })
		for id, n := range leased {
			if n != 1 {
				t.Fatalf("operation %s leased %d times", id, n)
			}
		}
		if left, _ := f.store.LeaseUnknown(f.ctx, total, time.Minute); len(leased) != total || len(left) != 0 {
			t.Fatalf("leased %d distinct operations, %d left due; want %d and 0", len(leased), len(left), total)
		}
	})

	t.Run("ConcurrentCreate", func(t *testing.T) {
		f := setup(t, h)
		stores := f.stores(h)
		n := f.newOp("acme")
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			created int
			ids     = map[string]bool{}
			errs    []error
		)
		for g := 0; g < 32; g++ {
			wg.Add(1)
			go func(s ledger.Store) {
				defer wg.Done()
				op, c, err := s.Create(f.ctx, n)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
					return
				}
				ids[op.ID] = true
				if c {
					created++
				}
			}(stores[g%len(stores)])
		}
		wg.Wait()
		if len(errs) > 0 || created != 1 || len(ids) != 1 {
			t.Fatalf("created %d, ids %d, errs %v", created, len(ids), errs)
		}
	})
}
