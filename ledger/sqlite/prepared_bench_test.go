package sqlite_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/sqlite"
	"settle/ledger/storetest"
)

// BenchmarkPreparedStatements runs the hot path — create, get, list, batch
// claim and batch record of 100 — on a fresh file twice in one run: first
// through a Ledger that prepares every statement on each call (the anchor:
// database/sql's behaviour without a statement cache), then through the
// Store, whose pools keep their prepared statements, and logs each
// measure's ratio. Every figure is per operation.
func BenchmarkPreparedStatements(b *testing.B) {
	ctx := context.Background()
	h := storetest.SQLite()
	var seq int
	newOp := func() ledger.NewOperation {
		seq++
		return ledger.NewOperation{Tenant: fmt.Sprintf("tenant-%d", seq%20), Type: "charge",
			IntentRef: fmt.Sprintf("intent-%d", seq), Target: "payments", RetryWindow: time.Hour,
			Payload: []byte(fmt.Sprintf(`{"amount":%d,"currency":"EUR","customer":"c-%d"}`, seq, seq%977))}
	}
	// cycle creates, reads, claims and records n operations through l and
	// returns the time of each step.
	cycle := func(b *testing.B, l *ledger.Ledger, n int) map[string]time.Duration {
		took := map[string]time.Duration{}
		t0 := time.Now()
		ops := make([]ledger.Operation, n)
		for i := range ops {
			op, _, err := l.Create(ctx, newOp())
			if err != nil {
				b.Fatal(err)
			}
			ops[i] = op
		}
		took["Create"] = time.Since(t0)
		t0 = time.Now()
		for _, op := range ops {
			if _, err := l.Get(ctx, op.Tenant, op.ID); err != nil {
				b.Fatal(err)
			}
		}
		took["Get"] = time.Since(t0)
		t0 = time.Now()
		for _, op := range ops[:min(n, 200)] {
			if _, err := l.List(ctx, ledger.ListFilter{Tenant: op.Tenant, Limit: 20}); err != nil {
				b.Fatal(err)
			}
		}
		took["List20"] = time.Since(t0) * time.Duration(n) / time.Duration(min(n, 200))
		t0 = time.Now()
		var claimed []ledger.Operation
		for len(claimed) < n {
			got, err := l.ClaimBatch(ctx, 100, time.Hour)
			if err != nil || len(got) == 0 {
				b.Fatalf("claimed %d: %v", len(got), err)
			}
			claimed = append(claimed, got...)
		}
		took["ClaimBatch100"] = time.Since(t0)
		t0 = time.Now()
		for i := 0; i < len(claimed); i += 100 {
			var batch []ledger.Outcome
			for _, op := range claimed[i:min(i+100, len(claimed))] {
				batch = append(batch, ledger.Outcome{Tenant: op.Tenant, OperationID: op.ID, Fence: op.Fence,
					From: ledger.InFlight, To: ledger.Succeeded, RemoteRef: "ch_" + op.ID[:8],
					Actor: ledger.ActorExecutor, Evidence: map[string]any{"status": 201}})
			}
			if _, err := l.RecordBatch(ctx, batch); err != nil {
				b.Fatal(err)
			}
		}
		took["RecordBatch100"] = time.Since(t0)
		return took
	}
	var anchor, cached map[string]time.Duration
	run := func(b *testing.B, ledgerOf func(*sqlite.Store) *ledger.Ledger) map[string]time.Duration {
		s := h.New(b, ledgertest.NewClock().Now).(*sqlite.Store)
		cycle(b, ledgerOf(s), 100) // warm: the caches fill, the file grows its first pages
		b.ResetTimer()
		took := cycle(b, ledgerOf(s), b.N)
		b.StopTimer()
		for step, d := range took {
			took[step] = d / time.Duration(b.N)
			b.ReportMetric(float64(took[step].Nanoseconds())/1e3, step+"-µs/op")
		}
		return took
	}
	b.Run("Unprepared", func(b *testing.B) { anchor = run(b, sqlite.Unprepared) })
	b.Run("Prepared", func(b *testing.B) { cached = run(b, func(s *sqlite.Store) *ledger.Ledger { return s.Ledger }) })
	for _, step := range []string{"Create", "Get", "List20", "ClaimBatch100", "RecordBatch100"} {
		if anchor[step] > 0 && cached[step] > 0 {
			b.Logf("%-15s unprepared %7.1f µs/op, prepared %7.1f µs/op: %.2f× the throughput", step,
				float64(anchor[step].Nanoseconds())/1e3, float64(cached[step].Nanoseconds())/1e3,
				float64(anchor[step])/float64(cached[step]))
		}
	}
}
