package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/postgres"
	"settle/ledger/postgres/pgtest"
)

// TestPlans_SmallTables explains the hot path's statements on an empty
// table and on one of 10,000 operations, the sizes a new installation
// starts from. pgx prepares each statement once per connection, and the
// server may keep a statement's generic plan after five executions: a
// generic plan made while operation_ledger was empty that read it whole
// would stay until an analyse re-planned it, the claims and records
// degrading as the table grew (PERFORMANCE-NOTES: threefold within 20
// seconds). So at each size every statement the executor, sweeper and
// reconciler send — as the store sends them, captured — must reach
// operation_ledger through an index in its generic plan, or be one of
// customPlans (plancache.go), planned for its arguments every time. The
// empty table is a freshly migrated one, never analysed, as a new
// installation's is until autovacuum first analyses it. TestPlans checks
// the same statements at 100,000 (and scripts/plans-10m.sh at any size).
func TestPlans_SmallTables(t *testing.T) {
	t.Parallel()
	for _, rows := range []int{0, 10_000} {
		t.Run(fmt.Sprint(rows), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			clk := ledgertest.NewClock()
			cfg := pgtest.Schema(t)
			plain := pgtest.Pool(t, cfg)
			if rows > 0 {
				if _, err := load(ctx, plain, clk.Now(), rows); err != nil {
					t.Fatal(err)
				}
			}
			traced := cfg.Copy()
			trace := &statementLog{}
			traced.ConnConfig.Tracer = trace
			s := postgres.New(pgtest.Pool(t, traced), clk.Now)
			for _, step := range hotPath(ctx, s, clk) {
				trace.take()
				if err := step.run(); err != nil {
					t.Fatalf("%s: %v", step.name, err)
				}
				stmts := trace.take()
				if len(stmts) == 0 {
					t.Fatalf("%s sent no statement", step.name)
				}
				seen := map[string]bool{}
				for i, st := range stmts {
					if seen[st.sql] {
						continue
					}
					seen[st.sql] = true
					name := postgres.StatementName(st.sql)
					custom, _, err := explain(ctx, plain, st)
					if err != nil {
						t.Fatalf("%s statement %d (%s): %v", step.name, i+1, name, err)
					}
					if postgres.CustomPlan(name) {
						// Planned for its arguments and the table as it is on
						// every execution: a whole read of a small table is
						// then right for that moment, and never kept.
						t.Logf("%s statement %d (%s): custom plans only: %s", step.name, i+1, name, strings.Join(custom.scans(), ", "))
						continue
					}
					generic, gtext, err := explainGeneric(ctx, plain, st)
					if err != nil {
						t.Fatalf("%s statement %d (%s): generic plan: %v", step.name, i+1, name, err)
					}
					if slices.Contains(generic.seqScans(), "operation_ledger") {
						t.Errorf("%s statement %d (%s): its generic plan at %d operations reads operation_ledger whole, and would stay as the table grows:\n%s",
							step.name, i+1, name, rows, gtext)
					}
					t.Logf("%s statement %d (%s): custom %s; generic %s", step.name, i+1, name,
						strings.Join(custom.scans(), ", "), strings.Join(generic.scans(), ", "))
				}
			}
		})
	}
}

type hotStep struct {
	name string
	run  func() error
}

// hotPath is what the executor, sweeper and reconciler do to a few new
// operations: create, claim one and a batch, record them, sweep expired
// leases and lease due UNKNOWN work. Each step fails only on an error:
// on an empty table a sweep or a lease rightly finds nothing.
func hotPath(ctx context.Context, s *postgres.Store, clk *ledgertest.Clock) []hotStep {
	var one ledger.Operation
	var batch []ledger.Operation
	return []hotStep{
		{"Create", func() error {
			for i := range 3 {
				if _, _, err := s.Create(ctx, planOp(fmt.Sprint("small-", i), 100)); err != nil {
					return err
				}
			}
			return nil
		}},
		{"Create/Existing", func() error { _, _, err := s.Create(ctx, planOp("small-0", 100)); return err }},
		{"Claim", func() error {
			op, err := s.GetByIntent(ctx, "tenant-1", "charge", "small-0")
			if err == nil {
				one, err = s.Claim(ctx, op.Tenant, op.ID, op.PayloadHash, time.Minute)
			}
			return err
		}},
		{"ClaimBatch", func() error {
			var err error
			if batch, err = s.ClaimBatch(ctx, 100, time.Minute); err == nil && len(batch) == 0 {
				err = fmt.Errorf("claimed nothing")
			}
			return err
		}},
		{"Record", func() error { _, err := s.Record(ctx, succeeded(one)); return err }},
		{"RecordBatch", func() error {
			var outcomes []ledger.Outcome
			for _, op := range batch {
				outcomes = append(outcomes, succeeded(op))
			}
			_, err := s.RecordBatch(ctx, outcomes)
			return err
		}},
		{"SweepExpired", func() error { clk.Advance(2 * time.Minute); _, err := s.SweepExpired(ctx); return err }},
		{"LeaseUnknown", func() error { _, err := s.LeaseUnknown(ctx, 50, time.Minute); return err }},
	}
}
