package postgres_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"settle/ledger"
	"settle/ledger/postgres"
	"settle/ledger/postgres/pgtest"
)

// figureTenants is how many tenants BenchmarkFigures spreads its
// operations over: the overview reads every one of them.
const figureTenants = 50

// BenchmarkFigures measures the manager figures at SETTLE_FIGURES_ROWS
// operations (skipped when unset): one tenant's 30-day page from the
// rollups, the same from the raw event log for comparison, and the
// all-tenants overview (every tenant's 30 days). The rows are seeded with
// COPY over 90 days; docs/performance.md has the figures and the command.
func BenchmarkFigures(b *testing.B) {
	v := os.Getenv("SETTLE_FIGURES_ROWS")
	if v == "" {
		b.Skip("SETTLE_FIGURES_ROWS is not set")
	}
	rows, err := strconv.Atoi(v)
	if err != nil || rows < figureTenants*100 {
		b.Fatalf("SETTLE_FIGURES_ROWS=%q: want a number of operations, at least %d", v, figureTenants*100)
	}
	ctx := context.Background()
	pool := figuresPool(ctx, b)
	now := time.Now()
	var have int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM operation_ledger`).Scan(&have); err != nil {
		b.Fatal(err)
	}
	switch {
	case have == rows:
		b.Logf("%d operations already seeded; reusing them", rows)
	case have != 0:
		b.Fatalf("the database holds %d operations, not %d; give SETTLE_FIGURES_DATABASE_URL an empty database", have, rows)
	default:
		start := time.Now()
		if err := seedFigures(ctx, pool, now, rows); err != nil {
			b.Fatal(err)
		}
		b.Logf("%d operations seeded in %s", rows, time.Since(start).Round(time.Second))
	}
	s := postgres.New(pool, time.Now)
	since := ledger.DaysEnding(now, 30)
	// The backfilled rollups answer what the event log answers.
	ts, err := s.Transitions(ctx, "tenant-1", since)
	if err != nil {
		b.Fatal(err)
	}
	r, err := s.FigureRollup(ctx, "tenant-1", since)
	if err != nil {
		b.Fatal(err)
	}
	if got, want := ledger.ComputeRollup("tenant-1", since, r), ledger.ComputeFigures("tenant-1", since, ts); !reflect.DeepEqual(got, want) {
		b.Fatalf("rollup %+v, raw %+v", got, want)
	}

	b.Run("Tenant30Days", func(b *testing.B) {
		for b.Loop() {
			f, err := ledger.Figures(ctx, s, "tenant-1", since)
			if err != nil || len(f.Targets) == 0 {
				b.Fatalf("%+v %v", f, err)
			}
		}
	})
	b.Run("Tenant30DaysRaw", func(b *testing.B) {
		// A moment that is not a midnight: the event log, as before 00018.
		raw := ledger.Window{Since: since.Since.Add(time.Second), Until: since.Until}
		for b.Loop() {
			if _, err := ledger.Figures(ctx, s, "tenant-1", raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The overview as the console reads it (Ledger.FiguresOf: six
	// statements for all tenants), and tenant by tenant as before, four
	// at a time (a source with the rollups but without FiguresOf): the
	// anchor of the ratio.
	overview := func(src ledger.FigureSource) func(b *testing.B) {
		return func(b *testing.B) {
			for b.Loop() {
				tenants, err := s.Tenants(ctx)
				if err != nil || len(tenants) != figureTenants {
					b.Fatalf("tenants %d: %v", len(tenants), err)
				}
				if _, err := ledger.FiguresOf(ctx, src, tenants, since); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	b.Run("Overview", overview(s))
	b.Run("OverviewEachTenant", overview(struct {
		ledger.FigureSource
		ledger.RollupStore
	}{s, s}))
}

// figuresPool is a fresh schema, or with SETTLE_FIGURES_DATABASE_URL a
// database of its own, migrated and kept: seeding ten million operations
// takes an hour, so it can be done once and measured again later.
func figuresPool(ctx context.Context, b *testing.B) *pgxpool.Pool {
	url := os.Getenv("SETTLE_FIGURES_DATABASE_URL")
	if url == "" {
		return pgtest.Pool(b, pgtest.Schema(b))
	}
	pool, err := postgres.Open(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	if err := postgres.Migrate(ctx, pool); err != nil {
		b.Fatal(err)
	}
	return pool
}

// seedFigures copies rows operations, created evenly over the 90 days
// before now, with their events: of every 1,000, 20 went through UNKNOWN
// and were resolved minutes to hours later, 10 are UNKNOWN now, 1 is
// ESCALATED, 10 FAILED_TERMINAL, the rest SUCCEEDED at once. The rollup
// trigger is off during the copy and the rollups are built after it by
// the migration's own backfill, as a restore would.
func seedFigures(ctx context.Context, pool *pgxpool.Pool, now time.Time, rows int) error {
	if _, err := pool.Exec(ctx, `ALTER TABLE operation_events DISABLE TRIGGER operation_events_figure_rollup`); err != nil {
		return err
	}
	step := 90 * 24 * time.Hour / time.Duration(rows)
	var ops, events [][]any
	flush := func() error {
		if _, err := pool.CopyFrom(ctx, pgx.Identifier{"operation_ledger"}, []string{"tenant_id", "operation_id",
			"operation_type", "intent_ref", "target", "payload", "payload_hash", "remote_key", "state", "fence_token",
			"attempt_count", "remote_ref", "retry_window_end", "next_reconcile_at", "created_at", "updated_at"},
			pgx.CopyFromRows(ops)); err != nil {
			return fmt.Errorf("copy operations: %w", err)
		}
		if _, err := pool.CopyFrom(ctx, pgx.Identifier{"operation_events"}, []string{"tenant_id", "operation_id",
			"from_state", "to_state", "fence_token", "actor", "reason", "at"}, pgx.CopyFromRows(events)); err != nil {
			return fmt.Errorf("copy events: %w", err)
		}
		ops, events = ops[:0], events[:0]
		return nil
	}
	for n := 1; n <= rows; n++ {
		tenant := "tenant-" + strconv.Itoa(n%figureTenants)
		id := uuid.New()
		created := now.Add(-time.Duration(n) * step)
		payload := fmt.Appendf(nil, `{"amount":%d,"currency":"EUR"}`, n)
		hash := sha256.Sum256(payload)
		target := "payments"
		if (n/5000)%50 == 7 {
			target = "payouts"
		}
		state, ref, updated := ledger.Succeeded, any("ref-"+strconv.Itoa(n)), created.Add(time.Second)
		var next any
		ev := func(from any, to ledger.State, at time.Time) {
			events = append(events, []any{tenant, id, from, string(to), int64(1), "executor", "", at})
		}
		events = append(events, []any{tenant, id, nil, string(ledger.Prepared), int64(0), "api", "", created})
		ev(string(ledger.Prepared), ledger.InFlight, created.Add(time.Second/2))
		switch k := (n / figureTenants) % 1000; {
		case k < 20: // UNKNOWN, then found by a lookup
			unknownAt := created.Add(time.Minute)
			updated = unknownAt.Add(time.Duration(1+n%240) * time.Minute)
			ev(string(ledger.InFlight), ledger.Unknown, unknownAt)
			ev(string(ledger.Unknown), ledger.Succeeded, updated)
		case k < 30: // UNKNOWN now
			state, ref, updated, next = ledger.Unknown, nil, created.Add(time.Minute), now.Add(time.Hour)
			ev(string(ledger.InFlight), ledger.Unknown, updated)
		case k < 31:
			state, ref, updated = ledger.Escalated, nil, created.Add(time.Hour)
			ev(string(ledger.InFlight), ledger.Unknown, created.Add(time.Minute))
			ev(string(ledger.Unknown), ledger.Escalated, updated)
		case k < 41:
			state, ref = ledger.FailedTerminal, nil
			ev(string(ledger.InFlight), ledger.FailedTerminal, updated)
		default:
			ev(string(ledger.InFlight), ledger.Succeeded, updated)
		}
		ops = append(ops, []any{tenant, id, "charge", "intent-" + strconv.Itoa(n), target, payload, hash[:], uuid.New(),
			string(state), int64(1), int32(1), ref, created.Add(24 * time.Hour), next, created, updated})
		if len(ops) == 10_000 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	for _, stmt := range []string{`SELECT figure_rollup_backfill()`,
		`ALTER TABLE operation_events ENABLE TRIGGER operation_events_figure_rollup`,
		`VACUUM (ANALYZE) operation_ledger`, `VACUUM (ANALYZE) operation_events`,
		`VACUUM (ANALYZE) figure_days`, `VACUUM (ANALYZE) figure_episodes`, `VACUUM (ANALYZE) figure_escalations`} {
		if _, err := pool.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("%s: %w", stmt, err)
		}
	}
	return nil
}
