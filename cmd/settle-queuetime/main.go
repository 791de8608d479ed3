// Command settle-queuetime seeds a queue of escalated operations, a
// quarantine of inbound events and an audit finding per operation, and
// prints how long the escalation queue (resolve.Service.Queue, what
// /escalations renders), the quarantine (resolve.Quarantine.List, what
// /quarantine renders) and the findings (ReviewStore.ListFindings with
// /findings' filter) take for their first page, a deep page and their
// filters: the median and p95 of -runs reads each, and the median as a
// ratio to an anchor measured in the same run (one operation read by its
// id), which drifts with the machine as the measures do. On PostgreSQL it
// prints the plans of the quarantine's open first page and of the
// findings' first page and searches. It is a measurement, not a test;
// docs/performance.md records its figures.
//
//	settle-queuetime -database-url postgres://… -n 100000
//	settle-queuetime -sqlite /tmp/q.db -n 100000
//
// It seeds one fresh tenant (perf-<unix time>) with rows written
// directly (not through the ledger, which would take minutes) and, on
// PostgreSQL, deletes them afterwards.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	"settle/internal/timing"
	"settle/ledger"
	"settle/ledger/postgres"
	"settle/ledger/sqlite"
	"settle/resolve"
)

func main() {
	dbURL := flag.String("database-url", "", "PostgreSQL URL")
	lite := flag.String("sqlite", "", "SQLite file (created)")
	n := flag.Int("n", 100000, "escalated operations to seed, and as many quarantined events")
	runs := flag.Int("runs", 21, "reads per measure")
	flag.Parse()
	if err := run(context.Background(), *dbURL, *lite, *n, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "settle-queuetime:", err)
		os.Exit(1)
	}
}

// store is what the measure needs of either store.
type store interface {
	resolve.Store
	resolve.QuarantineStore
	findingStore
	Close() error
}

func run(ctx context.Context, dbURL, lite string, n, runs int) error {
	tenant := "perf-" + strconv.FormatInt(time.Now().Unix(), 10)
	now := time.Now().UTC().Truncate(time.Second)
	var (
		st      store
		cleanup func() error
		explain func(context.Context) ([]string, error) // the plan of the last statement; nil on SQLite
		trace   = &lastStatement{}
	)
	start := time.Now()
	switch {
	case dbURL != "":
		pool, err := tracedPool(ctx, dbURL, trace)
		if err != nil {
			return err
		}
		defer pool.Close()
		if err := postgres.Migrate(ctx, pool); err != nil {
			return err
		}
		if _, err := pool.Exec(ctx, `INSERT INTO operation_ledger (tenant_id, operation_id, operation_type, intent_ref,
			target, payload, payload_hash, remote_key, state, fence_token, retry_window_end, deadline, reason,
			created_at, updated_at)
			SELECT $1, gen_random_uuid(), 'charge', 'perf-' || i, CASE WHEN i % 2 = 0 THEN 'payments' ELSE 'transfers' END,
				'{}'::bytea, sha256(('x' || i)::bytea), gen_random_uuid(), 'ESCALATED', 1, t, t,
				'the remote object does not match the approved payload', t, t
			FROM generate_series(1, $2) AS i, LATERAL (SELECT $3::timestamptz - i * interval '1 second' AS t) AS x`,
			tenant, n, now); err != nil {
			return fmt.Errorf("seed: %w", err)
		}
		if err := seedQuarantinePostgres(ctx, pool, tenant, n, now); err != nil {
			return fmt.Errorf("seed quarantine: %w", err)
		}
		if err := seedFindingsPostgres(ctx, pool, tenant); err != nil {
			return fmt.Errorf("seed findings: %w", err)
		}
		if _, err := pool.Exec(ctx, `ANALYZE operation_ledger; ANALYZE quarantine; ANALYZE audit_findings`); err != nil {
			return err
		}
		cleanup = func() error {
			_, err := pool.Exec(context.Background(), `DELETE FROM audit_findings WHERE tenant_id = $1`, tenant)
			if err == nil {
				_, err = pool.Exec(context.Background(), `DELETE FROM operation_ledger WHERE tenant_id = $1`, tenant)
			}
			if err == nil {
				_, err = pool.Exec(context.Background(), `DELETE FROM quarantine WHERE scope_tenant = $1`, tenant)
			}
			return err
		}
		explain = func(ctx context.Context) ([]string, error) { return explainLast(ctx, pool, trace) }
		st = postgres.New(pool, func() time.Time { return now })
	case lite != "":
		s, err := sqlite.Open(ctx, lite, func() time.Time { return now })
		if err != nil {
			return err
		}
		db, err := sql.Open("sqlite", "file:"+lite+"?_pragma=busy_timeout(10000)")
		if err != nil {
			return err
		}
		defer db.Close()
		if _, err := db.ExecContext(ctx, `WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ?2)
			INSERT INTO operation_ledger (tenant_id, operation_id, operation_type, intent_ref, target, payload,
				payload_hash, remote_key, state, fence_token, retry_window_end, deadline, reason, created_at, updated_at)
			SELECT ?1, `+sqliteUUID+`, 'charge', 'perf-' || i, CASE WHEN i % 2 = 0 THEN 'payments' ELSE 'transfers' END,
				X'7B7D', randomblob(32), `+sqliteUUID+`, 'ESCALATED', 1, ?3 - i * 1000000, ?3 - i * 1000000,
				'the remote object does not match the approved payload', ?3 - i * 1000000, ?3 - i * 1000000
			FROM s`, tenant, n, now.UnixMicro()); err != nil {
			return fmt.Errorf("seed: %w", err)
		}
		if err := seedQuarantineSQLite(ctx, db, tenant, n, now); err != nil {
			return fmt.Errorf("seed quarantine: %w", err)
		}
		if err := seedFindingsSQLite(ctx, db, tenant); err != nil {
			return fmt.Errorf("seed findings: %w", err)
		}
		if _, err := db.ExecContext(ctx, `ANALYZE`); err != nil {
			return err
		}
		cleanup = func() error { return nil }
		st = s
	default:
		return fmt.Errorf("give -database-url or -sqlite")
	}
	defer st.Close()
	defer func() {
		if err := cleanup(); err != nil {
			fmt.Fprintln(os.Stderr, "settle-queuetime: cleanup:", err)
		}
	}()
	fmt.Printf("seeded %d escalated operations, %d quarantined events and %d audit findings of tenant %s in %s\n", n, n, n, tenant,
		time.Since(start).Round(time.Millisecond))

	svc := resolve.New(st, nil, nil, func() time.Time { return now })
	sc := resolve.TenantScope(tenant)
	// A deep page: the cursor of the operation nine tenths down the queue
	// (oldest first), found once, untimed, by the seeded order.
	// Operation i (1..n) was created i seconds before now, so the oldest
	// first order's 90% mark is i = n/10.
	at := now.Add(-time.Duration(n/10) * time.Second)
	page, err := st.ListQueue(ctx, ledger.QueueFilter{Tenant: tenant, Now: now, Limit: 1, Newest: true,
		CreatedBefore: ptr(at.Add(time.Millisecond))})
	if err != nil || len(page.Operations) == 0 {
		return fmt.Errorf("deep cursor: %v", err)
	}
	measures := []struct {
		name string
		f    resolve.QueueFilter
	}{
		{"first page (100, oldest first)", resolve.QueueFilter{}},
		{"deep page (100 after the 90% mark)", resolve.QueueFilter{Cursor: cursorAfter(page.Operations[0])}},
		{"newest first", resolve.QueueFilter{Order: resolve.NewestFirst}},
		{"one target", resolve.QueueFilter{Target: "transfers"}},
		{"search by intent reference", resolve.QueueFilter{Ref: "PERF-4242"}},
		{"reason contains (matches all)", resolve.QueueFilter{Reason: "does not match"}},
		{"awaiting me (matches none: no proposals)", resolve.QueueFilter{AwaitingMe: true}},
	}
	actx := ledger.NewContextWithActor(ctx, ledger.Actor{Subject: "perf:olu", Name: "Olu", Role: "owner"})
	anchorOp := page.Operations[0]
	anchor, err := measure("anchor: one operation by its id", runs, 0, func() (int, error) {
		_, err := st.Get(ctx, tenant, anchorOp.ID)
		return 1, err
	})
	if err != nil {
		return err
	}
	fmt.Println("escalation queue (resolve.Service.Queue)")
	for _, m := range measures {
		if _, err := measure(m.name, runs, anchor, func() (int, error) {
			q, err := svc.Queue(actx, sc, m.f)
			return len(q.Items), err
		}); err != nil {
			return err
		}
	}
	if err := measureQuarantine(ctx, st, tenant, now, runs, anchor, explain); err != nil {
		return err
	}
	return measureFindings(ctx, st, tenant, n, runs, anchor, explain)
}

// measure times f runs times and prints its median and p95, and the
// median's ratio to anchor (none when anchor is 0); it returns the median.
func measure(name string, runs int, anchor time.Duration, f func() (items int, err error)) (time.Duration, error) {
	items := 0
	times, err := timing.Repeat(runs, func() error {
		n, err := f()
		items = n
		return err
	}, nil)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	median := times.Median()
	ratio := ""
	if anchor > 0 {
		ratio = fmt.Sprintf("  %6.1f× anchor", timing.Ratio(median, anchor))
	}
	fmt.Printf("  %-48s %4d items  median %8s  p95 %8s%s\n", name, items,
		median.Round(10*time.Microsecond), times.P95().Round(10*time.Microsecond), ratio)
	return median, nil
}

// cursorAfter is the cursor of a page ending at op: the deep page's start.
func cursorAfter(op ledger.Operation) string {
	return ledger.NextPage([]ledger.Operation{op, op}, 1).Next
}

const sqliteUUID = `lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-' || hex(randomblob(2)) || '-' ||
	hex(randomblob(2)) || '-' || hex(randomblob(6)))`

func ptr[T any](v T) *T { return &v }
