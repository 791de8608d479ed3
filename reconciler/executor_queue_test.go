package reconciler_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
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

// claimCounter is a Store that notes the size of every claim that found
// work.
type claimCounter struct {
	ledger.Store
	mu    sync.Mutex
	sizes []int
}

func (s *claimCounter) ClaimBatch(ctx context.Context, n int, lease time.Duration, byTarget ...ledger.TargetLease) ([]ledger.Operation, error) {
	ops, err := s.Store.ClaimBatch(ctx, n, lease, byTarget...)
	if len(ops) > 0 {
		s.mu.Lock()
		s.sizes = append(s.sizes, len(ops))
		s.mu.Unlock()
	}
	return ops, err
}

// The executor claims from its local queue's room, not one operation per
// freed worker: with 4 workers and a backlog of 400, claims were at most 4
// (the free workers) without the queue. With the default queue of
// 2×Workers they average well above that; with a queue of a batch and more
// they come close to the batch of 10.
func TestExecutor_ClaimsFullBatches(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		queue   int
		atLeast float64 // operations per claim, on average
	}{
		{"DefaultQueue", 0, 6}, // 1.5×Workers: the queue less its low-water mark
		{"QueueOf16", 16, 8.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
				r := newRig(t, h, sim.Config{Class: "A"}, nil)
				const backlog = 400
				ops := r.createMany(backlog, func(i int) (string, string, int) {
					return "acme", fmt.Sprintf("order-%d", i), 100 + i
				})
				counted := &claimCounter{Store: r.store}
				exec := r.executor(counted)
				exec.Workers, exec.Batch, exec.Queue = 4, 10, tc.queue
				r.runUntil("every operation sent", func() bool { return len(r.sim.Objects()) >= backlog }, exec)

				counted.mu.Lock()
				sizes := counted.sizes
				counted.mu.Unlock()
				total := 0
				for _, n := range sizes {
					total += n
				}
				avg := float64(total) / float64(len(sizes))
				t.Logf("%d operations in %d claims, %.1f per claim: %v", total, len(sizes), avg, sizes)
				if total != backlog {
					t.Fatalf("claimed %d operations, want %d", total, backlog)
				}
				if avg < tc.atLeast {
					t.Fatalf("claims averaged %.1f operations, want at least %.1f (batch %d, 4 workers)", avg, tc.atLeast, exec.Batch)
				}
				for _, op := range ops {
					if got := r.get(op); got.State != ledger.Succeeded || r.remote(op) != 1 {
						t.Fatalf("%s: %s with %d remote objects", op.IntentRef, got.State, r.remote(op))
					}
				}
			})
		})
	}
}

// A queued operation that waited past its queue allowance behind a slow
// send is not sent: it stays IN_FLIGHT until its lease runs out and the
// sweeper makes it UNKNOWN, and the target never hears of it.
func TestExecutor_QueuedPastAllowanceIsNotSent(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "A", SlowDelay: 4 * time.Second}, func(c *target.Contract) {
			c.Timeout = 6 * time.Second
		})
		var logs syncBuffer
		exec := r.executor(r.store)
		// One worker and a queue of two; a queued send must start within
		// 2s of its claim (a quarter of the 8s lease cap), and the slow
		// send ahead of it takes 4s (inside the 6s timeout and the lease).
		// The queue takes an operation while the measured send time is
		// under 1s (half the allowance), which a loaded machine's
		// loopback sends are.
		exec.Workers, exec.QueueWait, exec.Lease = 1, 2*time.Second, 8*time.Second
		exec.Log = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn})).With("component", "executor")
		stop := r.start(exec, r.sweeper())
		defer stop()

		// Fast sends first, so that the executor measures its send time
		// and lets operations queue.
		warm := r.confirmedBy(3)
		r.sim.Script(sim.Slow)
		slow := r.create("acme", "slow", 700)
		r.waitFor("the slow send to be claimed", func() bool { return r.get(slow).State != ledger.Prepared })
		queued := r.create("acme", "queued", 800)
		r.waitFor("the queued operation to expire into UNKNOWN", r.isIn(queued, ledger.Unknown))
		r.waitFor("the slow send to be recorded", r.isIn(slow, ledger.Succeeded))
		stop()

		if n := r.remote(queued); n != 0 {
			t.Fatalf("the target holds %d objects for the queued operation", n)
		}
		for _, o := range r.sim.Objects() {
			if o.IdempotencyKey == queued.RemoteKey {
				t.Fatalf("the queued operation's key reached the target: %+v", o)
			}
		}
		if got := r.sim.Requests(); got != len(warm)+1 {
			t.Fatalf("%d create requests, want %d (the warm-up and the slow send)", got, len(warm)+1)
		}
		want := []ledger.State{ledger.Prepared, ledger.InFlight, ledger.Unknown}
		if got := r.history(queued); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("history %v, want %v", got, want)
		}
		if !strings.Contains(logs.String(), "not sent: queued past its lease allowance") ||
			!strings.Contains(logs.String(), queued.ID) {
			t.Fatalf("no log line for the unsent operation:\n%s", logs.String())
		}
	})
}

// claimLatch is a Store whose ClaimBatch waits while the test holds
// claims.
type claimLatch struct {
	ledger.Store
	mu      sync.Mutex
	held    chan struct{}
	waiting chan struct{} // a claim waits
}

// hold makes claims wait until release is called.
func (s *claimLatch) hold() (release func()) {
	ch := make(chan struct{})
	s.mu.Lock()
	s.held = ch
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			s.held = nil
			s.mu.Unlock()
			close(ch)
		})
	}
}

func (s *claimLatch) ClaimBatch(ctx context.Context, n int, lease time.Duration, byTarget ...ledger.TargetLease) ([]ledger.Operation, error) {
	s.mu.Lock()
	ch := s.held
	s.mu.Unlock()
	if ch != nil {
		select {
		case s.waiting <- struct{}{}:
		default:
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return s.Store.ClaimBatch(ctx, n, lease, byTarget...)
}

// confirmedBy creates n operations and waits, with the executor the caller
// runs, until each is SUCCEEDED.
func (r *rig) confirmedBy(n int) []ledger.Operation {
	r.t.Helper()
	var ops []ledger.Operation
	for i := range n {
		op := r.create("acme", fmt.Sprintf("warm-%d", i), 100+i)
		ops = append(ops, op)
	}
	for _, op := range ops {
		r.waitFor(op.IntentRef+" to succeed", r.isIn(op, ledger.Succeeded))
	}
	return ops
}

// Operations still in the local queue when the executor stops are not
// sent, however much of their allowance is left: shutdown sends nothing
// more, finishes and records the send in progress, and leaves the queued
// ones IN_FLIGHT for their leases to expire into UNKNOWN. The send in
// progress is held at a gate until the executor has been cancelled, so the
// order does not depend on the machine's speed.
func TestExecutor_QueuedAtShutdownIsNotSent(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "A"}, func(c *target.Contract) {
			c.Timeout = patience // the client waits for the gate
		})
		const warmups = 3
		var posts atomic.Int32
		arrived := make(chan struct{}, 10)
		gate, open := r.latch()
		r.proxy(func(w http.ResponseWriter, req *http.Request, next http.Handler) {
			if req.Method != http.MethodPost || posts.Add(1) <= warmups {
				next.ServeHTTP(w, req)
				return
			}
			gated(w, req, next, arrived, gate)
		})
		var logs syncBuffer
		claims := &claimLatch{Store: r.store, waiting: make(chan struct{}, 1)}
		exec := r.executor(claims)
		// One worker, a queue of two, and a lease long enough that a
		// queued send could wait 20s for the held one ahead of it: the
		// queue holds two while the measured send time is under 5s.
		exec.Workers, exec.Queue, exec.Lease, exec.QueueWait, exec.Grace = 1, 2, 2*time.Minute, 20*time.Second, patience
		exec.Log = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})).With("component", "executor")
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("the executor's log:\n%s", logs.String())
			}
		})
		ctx, cancel := context.WithCancel(r.ctx)
		returned := make(chan struct{})
		go func() { defer close(returned); _ = exec.Run(ctx) }()
		t.Cleanup(func() { cancel(); open(); <-returned })

		warm := r.confirmedBy(warmups)
		// The three are created while claims wait, so that one claim takes
		// them all: the worker's send is held at the gate, two wait in the
		// queue.
		release := claims.hold()
		await(t, "the executor's next claim to wait", claims.waiting)
		ops := []ledger.Operation{r.create("acme", "a", 700), r.create("acme", "b", 801), r.create("acme", "c", 802)}
		release()
		await(t, "a send to reach the gate", arrived)
		for _, op := range ops {
			r.waitFor(op.IntentRef+" to be claimed", r.isIn(op, ledger.InFlight))
		}
		cancel() // while the held send is in progress
		open()
		await(t, "Run to return", returned)

		var held ledger.Operation
		var queued []ledger.Operation
		for _, op := range ops {
			if r.remote(op) == 1 {
				held = op
			} else {
				queued = append(queued, op)
			}
		}
		if held.ID == "" || len(queued) != 2 {
			t.Fatalf("%d of the three reached the target, want the one held", 3-len(queued))
		}
		if got := r.get(held); got.State != ledger.Succeeded {
			t.Fatalf("the send in progress at shutdown: %s, want it finished and recorded", got.State)
		}
		for _, op := range queued {
			if got := r.get(op); got.State != ledger.InFlight || r.remote(op) != 0 {
				t.Fatalf("%s: %s with %d remote objects, want IN_FLIGHT and never sent", op.IntentRef, got.State, r.remote(op))
			}
		}
		if got := r.sim.Requests(); got != len(warm)+1 {
			t.Fatalf("%d create requests, want %d (the warm-up and the held send)", got, len(warm)+1)
		}
		if !strings.Contains(logs.String(), "claimed operations left unsent at shutdown") ||
			!strings.Contains(logs.String(), "operations=2") {
			t.Fatalf("no log line for the two unsent operations:\n%s", logs.String())
		}
	})
}
