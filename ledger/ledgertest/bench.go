package ledgertest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"settle/ledger"
)

// Bench runs the store benchmarks: create, single and batch claim, single
// and batch record. Every figure is per operation.
func Bench(b *testing.B, h Harness) {
	ctx := context.Background()
	var seq atomic.Int64
	newOp := func() ledger.NewOperation {
		n := seq.Add(1)
		return ledger.NewOperation{Tenant: fmt.Sprintf("tenant-%d", n%20), Type: "charge",
			IntentRef: fmt.Sprintf("intent-%d", n), Target: "payments", RetryWindow: time.Hour,
			Payload: []byte(fmt.Sprintf(`{"amount":%d,"currency":"EUR","customer":"c-%d"}`, n, n%977))}
	}
	// prepare creates n operations with 8 concurrent creators.
	prepare := func(b *testing.B, s ledger.Store, n int) []ledger.Operation {
		b.Helper()
		ops := make([]ledger.Operation, n)
		var wg sync.WaitGroup
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := w; i < n; i += 8 {
					op, _, err := s.Create(ctx, newOp())
					if err != nil {
						b.Error(err)
						return
					}
					ops[i] = op
				}
			}(w)
		}
		wg.Wait()
		return ops
	}
	claimAll := func(b *testing.B, s ledger.Store, n int) []ledger.Operation {
		b.Helper()
		prepare(b, s, n)
		var out []ledger.Operation
		for len(out) < n {
			got, err := s.ClaimBatch(ctx, 500, time.Hour)
			if err != nil || len(got) == 0 {
				b.Fatalf("claim: %d, %v", len(got), err)
			}
			out = append(out, got...)
		}
		return out
	}
	fresh := func(b *testing.B) ledger.Store { return h.New(b, NewClock().Now) }

	b.Run("Create", func(b *testing.B) {
		s := fresh(b)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, _, err := s.Create(ctx, newOp()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("CreateParallel16", func(b *testing.B) {
		s := fresh(b)
		b.SetParallelism(8) // 8 × GOMAXPROCS(2) = 16 goroutines
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, _, err := s.Create(ctx, newOp()); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("Claim", func(b *testing.B) {
		s := fresh(b)
		ops := prepare(b, s, b.N)
		b.ResetTimer()
		for _, op := range ops {
			if _, err := s.Claim(ctx, op.Tenant, op.ID, op.PayloadHash, time.Hour); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ClaimBatch100", func(b *testing.B) {
		s := fresh(b)
		prepare(b, s, b.N)
		b.ResetTimer()
		for done := 0; done < b.N; {
			got, err := s.ClaimBatch(ctx, 100, time.Hour)
			if err != nil || len(got) == 0 {
				b.Fatalf("claimed %d, %v", len(got), err)
			}
			done += len(got)
		}
	})
	b.Run("Record", func(b *testing.B) {
		s := fresh(b)
		ops := claimAll(b, s, b.N)
		b.ResetTimer()
		for _, op := range ops {
			if _, err := s.Record(ctx, succeed(op)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("RecordBatch100", func(b *testing.B) {
		s := fresh(b)
		ops := claimAll(b, s, b.N)
		b.ResetTimer()
		for i := 0; i < len(ops); i += 100 {
			batch := make([]ledger.Outcome, 0, 100)
			for _, op := range ops[i:min(i+100, len(ops))] {
				batch = append(batch, succeed(op))
			}
			errs, err := s.RecordBatch(ctx, batch)
			if err != nil {
				b.Fatal(err)
			}
			for _, e := range errs {
				if e != nil {
					b.Fatal(e)
				}
			}
		}
	})
}

func succeed(op ledger.Operation) ledger.Outcome {
	return ledger.Outcome{Tenant: op.Tenant, OperationID: op.ID, Fence: op.Fence, From: ledger.InFlight,
		To: ledger.Succeeded, RemoteRef: "ch_" + op.ID[:8], Actor: ledger.ActorExecutor,
		Evidence: map[string]any{"status": 201}}
}

// Creator is what creates an operation: a Store, or a Ledger that commits
// each creation on its own.
type Creator interface {
	Create(ctx context.Context, n ledger.NewOperation) (ledger.Operation, bool, error)
}

// BenchGroupCommit compares, in one run, concurrent creators (1 and 32)
// on the store's group commit with the same on oneByOne's Ledger over the
// same store, which commits every creation on its own (the path before
// group commit, and CreateTx's), and logs the ratio of their throughputs.
// One creator is the latency a request alone pays.
func BenchGroupCommit(b *testing.B, h Harness, oneByOne func(ledger.Store) Creator) {
	ctx := context.Background()
	var seq atomic.Int64
	run := func(b *testing.B, c Creator, creators int) time.Duration {
		var next atomic.Int64
		var wg sync.WaitGroup
		b.ResetTimer()
		for range creators {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for next.Add(1) <= int64(b.N) {
					n := seq.Add(1)
					op := ledger.NewOperation{Tenant: fmt.Sprintf("tenant-%d", n%20), Type: "charge",
						IntentRef: fmt.Sprintf("intent-%d", n), Target: "payments", RetryWindow: time.Hour,
						Payload: []byte(fmt.Sprintf(`{"amount":%d,"currency":"EUR"}`, n))}
					if _, _, err := c.Create(ctx, op); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		b.StopTimer()
		per := b.Elapsed() / time.Duration(b.N)
		b.ReportMetric(float64(time.Second/per), "creates/s")
		return per
	}
	for _, creators := range []int{1, 32} {
		b.Run(fmt.Sprint(creators), func(b *testing.B) {
			var one, group time.Duration
			b.Run("OneCommitEach", func(b *testing.B) { one = run(b, oneByOne(h.New(b, NewClock().Now)), creators) })
			b.Run("GroupCommit", func(b *testing.B) { group = run(b, h.New(b, NewClock().Now), creators) })
			if one > 0 && group > 0 {
				b.Logf("%d creators: one commit each %v per create, group commit %v: %.2f× the throughput",
					creators, one, group, float64(one)/float64(group))
			}
		})
	}
}
