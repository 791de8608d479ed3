package reconciler

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/storetest"
)

// tally is an Observer counting what it is told, by operation.
type tally struct {
	mu   sync.Mutex
	seen map[string]int
	n    int
}

func (c *tally) Committed(_ context.Context, cm ledger.Commit) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range cm.Transitions {
		c.seen[t.OperationID]++
		c.n++
	}
	c.n += len(cm.Refused)
}

func (c *tally) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// Two replicas' drainers share one backlog bigger than many batches: each
// stored observation is told to exactly one of them, once, and both stop
// when their context ends.
func TestDrainer_EachObservationOnce(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		clk := ledgertest.NewClock()
		st := h.New(t, clk.Now)
		ctx := context.Background()
		const rows = 260
		var c ledger.Commit
		for i := range rows {
			c.Transitions = append(c.Transitions, ledger.Transition{Tenant: "acme", OperationID: fmt.Sprintf("op-%03d", i),
				Target: "payments", From: ledger.Escalated, To: ledger.Succeeded, At: clk.Now()})
		}
		c.Refuse("acme")
		if err := st.(ledger.ObservationStore).RecordObservations(ctx, c); err != nil {
			t.Fatal(err)
		}
		a, b := &tally{seen: map[string]int{}}, &tally{seen: map[string]int{}}
		runCtx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		for i, obs := range []*tally{a, b} {
			s := st
			if i == 1 {
				s = h.Sibling(t, st, clk.Now)
			}
			d := &Drainer{Store: s.(ledger.ObservationStore), Observer: obs, Log: slog.New(slog.DiscardHandler),
				Tick: 5 * time.Millisecond, Batch: 20}
			wg.Add(1)
			go func() { defer wg.Done(); _ = d.Run(runCtx) }()
		}
		deadline := time.Now().Add(20 * time.Second)
		for a.total()+b.total() < rows+1 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		stop()
		wg.Wait()
		if got := a.total() + b.total(); got != rows+1 {
			t.Fatalf("told %d observations, want %d", got, rows+1)
		}
		for i := range rows {
			id := fmt.Sprintf("op-%03d", i)
			if n := a.seen[id] + b.seen[id]; n != 1 {
				t.Fatalf("%s told %d times", id, n)
			}
		}
	})
}
