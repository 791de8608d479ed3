package main

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"settle/ledger"
	"settle/ledger/postgres"
	"settle/resolve"
)

// The quarantine's share of the measure: n events of the tenant, half per
// target, one a second, one in ten already dismissed and one in a
// thousand with a rarer reason, read through resolve.Quarantine.List, 50
// a page as /quarantine shows them.

const quarantinePage = 50

// seedQuarantinePostgres writes the tenant's n events directly.
func seedQuarantinePostgres(ctx context.Context, pool *pgxpool.Pool, tenant string, n int, now time.Time) error {
	_, err := pool.Exec(ctx, `INSERT INTO quarantine (target, reason, event_id, claimed_reference, claimed_tenant,
			remote_id, quarantined_at, scope_tenant, resolved_at, resolved_by, resolved_by_name, resolved_by_role,
			resolution_kind, resolution)
		SELECT CASE WHEN i % 2 = 0 THEN 'payments' ELSE 'transfers' END,
			CASE WHEN i % 1000 = 1 THEN 'contradicts the ledger' ELSE 'no operation carries the event''s reference' END,
			'evt-perf-' || i, 'ref-perf-' || i, $1, 'ch_perf_' || i, t, $1,
			CASE WHEN i % 10 = 0 THEN t END, CASE WHEN i % 10 = 0 THEN 'perf:ada' ELSE '' END,
			CASE WHEN i % 10 = 0 THEN 'Ada' ELSE '' END, CASE WHEN i % 10 = 0 THEN 'owner' ELSE '' END,
			CASE WHEN i % 10 = 0 THEN 'dismissed' ELSE '' END, CASE WHEN i % 10 = 0 THEN 'a test event' ELSE '' END
		FROM generate_series(1, $2) AS i, LATERAL (SELECT $3::timestamptz - (($2 - i) * interval '1 second') AS t) AS x`,
		tenant, n, now)
	return err
}

// seedQuarantineSQLite writes the tenant's n events directly.
func seedQuarantineSQLite(ctx context.Context, db *sql.DB, tenant string, n int, now time.Time) error {
	_, err := db.ExecContext(ctx, `WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ?2)
		INSERT INTO quarantine (target, reason, event_id, claimed_reference, claimed_tenant, remote_id,
			quarantined_at, scope_tenant, resolved_at, resolved_by, resolved_by_name, resolved_by_role,
			resolution_kind, resolution)
		SELECT CASE WHEN i % 2 = 0 THEN 'payments' ELSE 'transfers' END,
			CASE WHEN i % 1000 = 1 THEN 'contradicts the ledger' ELSE 'no operation carries the event''s reference' END,
			'evt-perf-' || i, 'ref-perf-' || i, ?1, 'ch_perf_' || i, ?3 - (?2 - i) * 1000000, ?1,
			CASE WHEN i % 10 = 0 THEN ?3 - (?2 - i) * 1000000 END, CASE WHEN i % 10 = 0 THEN 'perf:ada' ELSE '' END,
			CASE WHEN i % 10 = 0 THEN 'Ada' ELSE '' END, CASE WHEN i % 10 = 0 THEN 'owner' ELSE '' END,
			CASE WHEN i % 10 = 0 THEN 'dismissed' ELSE '' END, CASE WHEN i % 10 = 0 THEN 'a test event' ELSE '' END
		FROM s`, tenant, n, now.UnixMicro())
	return err
}

// measureQuarantine prints the quarantine's measures; explain, when set,
// gives the plan of the last statement, printed for the open first page.
func measureQuarantine(ctx context.Context, st store, tenant string, now time.Time, runs int, anchor time.Duration,
	explain func(context.Context) ([]string, error)) error {
	q := resolve.NewQuarantine(st)
	sc := resolve.TenantScope(tenant)
	first, _, err := q.List(ctx, sc, ledger.QuarantineFilter{Tenants: []string{tenant}, Limit: 1})
	if err != nil || len(first) == 0 {
		return fmt.Errorf("quarantine: newest item: %v", err)
	}
	// Ids grow with the seed's order: nine tenths down the list is the
	// newest id less nine tenths of the items.
	deep := first[0].ID - int64(float64(first[0].ID)*0.9)
	open := func(f ledger.QuarantineFilter) ledger.QuarantineFilter {
		f.Open, f.Tenants, f.Limit = true, []string{tenant}, quarantinePage
		return f
	}
	measures := []struct {
		name string
		f    ledger.QuarantineFilter
	}{
		{"open, first page", open(ledger.QuarantineFilter{})},
		{"open, deep page (after the 90% mark)", open(ledger.QuarantineFilter{After: deep})},
		{"open, one target", open(ledger.QuarantineFilter{Target: "transfers"})},
		{"open, reason contains (1 in 1,000 match)", open(ledger.QuarantineFilter{Reason: "contradicts"})},
		{"open, search by event id (other case)", open(ledger.QuarantineFilter{Ref: "EVT-PERF-4242"})},
		{"open, older than a day", open(ledger.QuarantineFilter{Before: new(now.Add(-24 * time.Hour))})},
		{"resolved, first page", ledger.QuarantineFilter{Resolved: true, Tenants: []string{tenant}, Limit: quarantinePage}},
	}
	fmt.Println("quarantine (resolve.Quarantine.List)")
	for i, m := range measures {
		if _, err := measure(m.name, runs, anchor, func() (int, error) {
			items, _, err := q.List(ctx, sc, m.f)
			return len(items), err
		}); err != nil {
			return err
		}
		if i == 0 && explain != nil {
			plan, err := explain(ctx)
			if err != nil {
				return fmt.Errorf("explain: %w", err)
			}
			fmt.Println("    plan of the open first page:")
			for _, l := range plan {
				fmt.Println("      " + l)
			}
		}
	}
	return nil
}

// lastStatement remembers the last statement a pool sent, with its
// arguments, so that its plan can be asked.
type lastStatement struct {
	mu   sync.Mutex
	sql  string
	args []any
}

// TraceQueryStart implements pgx.QueryTracer.
func (l *lastStatement) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if !strings.HasPrefix(strings.TrimSpace(d.SQL), "EXPLAIN") {
		l.mu.Lock()
		l.sql, l.args = d.SQL, d.Args
		l.mu.Unlock()
	}
	return ctx
}

// TraceQueryEnd implements pgx.QueryTracer.
func (l *lastStatement) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// tracedPool opens url's pool with trace as its tracer.
func tracedPool(ctx context.Context, url string, trace *lastStatement) (*pgxpool.Pool, error) {
	cfg, err := postgres.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	cfg.ConnConfig.Tracer = trace
	return pgxpool.NewWithConfig(ctx, cfg)
}

// explainLast is EXPLAIN (ANALYZE) of the last statement trace saw.
func explainLast(ctx context.Context, pool *pgxpool.Pool, trace *lastStatement) ([]string, error) {
	trace.mu.Lock()
	stmt, args := trace.sql, trace.args
	trace.mu.Unlock()
	rows, err := pool.Query(ctx, "EXPLAIN (ANALYZE, COSTS OFF) "+stmt, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}
