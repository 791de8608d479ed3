package main

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"settle/ledger/postgres"
	"settle/ledger/sqlite"
)

// seedTables are the tables a seed loads row by row; their keys and
// indexes are built after the load.
var seedTables = []string{"operation_ledger", "operation_events", "operation_objects"}

// seedPostgres migrates url's current schema, checks it holds no
// operations and loads sh into it (see benchSeedCmd's help).
func seedPostgres(ctx context.Context, url string, sh seedShape) (steps []seedStep, err error) {
	pool, err := postgres.Open(ctx, url)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	if err := timed(&steps, "migrate", func() error { return postgres.Migrate(ctx, pool) }); err != nil {
		return steps, err
	}
	var some bool
	if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM operation_ledger)`).Scan(&some); err != nil {
		return steps, err
	}
	if some {
		return steps, fmt.Errorf("the database already holds operations: seed an empty one (a fresh database, or a fresh schema named by search_path in the URL)")
	}
	drop, build, err := seedKeys(ctx, pool)
	if err != nil {
		return steps, err
	}
	exec := func(stmts ...string) error {
		for _, s := range stmts {
			if _, err := pool.Exec(ctx, s); err != nil {
				return fmt.Errorf("%s: %w", s, err)
			}
		}
		return nil
	}
	// The row triggers (operation_objects, figure rollups) are replaced by
	// one statement each below; the append-only guard fires on no insert.
	off := []string{`ALTER TABLE operation_ledger DISABLE TRIGGER USER`, `ALTER TABLE operation_events DISABLE TRIGGER USER`}
	if err := timed(&steps, "drop keys, indexes, triggers", func() error { return exec(append(drop, off...)...) }); err != nil {
		return steps, err
	}
	if err := timed(&steps, "COPY operations and events", func() error { return copyPostgres(ctx, pool, sh) }); err != nil {
		return steps, err
	}
	if err := timed(&steps, "operation_objects, tenants", func() error {
		if err := exec(`INSERT INTO operation_objects (tenant_id, object_id, operation_id)
			SELECT tenant_id, remote_ref, operation_id FROM operation_ledger WHERE remote_ref IS NOT NULL AND remote_ref <> ''`); err != nil {
			return err
		}
		_, err := pool.Exec(ctx, `INSERT INTO tenants (tenant_id, created_at) SELECT t, $2 FROM unnest($1::text[]) t
			ON CONFLICT DO NOTHING`, sh.tenants, sh.now.Add(-seedSpan-time.Hour))
		return err
	}); err != nil {
		return steps, err
	}
	if err := timed(&steps, "build indexes and keys", func() error { return buildPostgres(ctx, pool, build) }); err != nil {
		return steps, err
	}
	on := []string{`ALTER TABLE operation_ledger ENABLE TRIGGER USER`, `ALTER TABLE operation_events ENABLE TRIGGER USER`}
	if err := timed(&steps, "figure rollups, triggers on", func() error {
		return exec(append([]string{`SELECT figure_rollup_backfill()`}, on...)...)
	}); err != nil {
		return steps, err
	}
	err = timed(&steps, "vacuum and analyse", func() error {
		for _, t := range append(slices.Clone(seedTables), "figure_days", "figure_episodes", "figure_escalations", "tenants") {
			if err := exec("VACUUM (ANALYZE) " + t); err != nil {
				return err
			}
		}
		return nil
	})
	return steps, err
}

// seedKeys returns the statements that drop the seeded tables' foreign
// keys (and those referencing them), keys and other indexes, and those
// that build them again, in the opposite order.
func seedKeys(ctx context.Context, pool *pgxpool.Pool) (drop, build []string, err error) {
	var pairs [][2]string
	for _, q := range []string{`SELECT 'ALTER TABLE ' || conrelid::regclass || ' DROP CONSTRAINT ' || quote_ident(conname),
			'ALTER TABLE ' || conrelid::regclass || ' ADD CONSTRAINT ' || quote_ident(conname) || ' ' || pg_get_constraintdef(oid)
		FROM pg_constraint WHERE contype IN ('f', 'p', 'u') AND connamespace = current_schema()::regnamespace
			AND (conrelid = ANY($1::regclass[]) OR confrelid = ANY($1::regclass[]))
		ORDER BY contype = 'f' DESC, conname`,
		`SELECT 'DROP INDEX ' || quote_ident(i.relname), pg_get_indexdef(x.indexrelid)
		FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
		WHERE x.indrelid = ANY($1::regclass[]) AND NOT EXISTS (
			SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid AND c.contype IN ('p', 'u'))
		ORDER BY i.relname`} {
		rows, err := pool.Query(ctx, q, seedTables)
		if err != nil {
			return nil, nil, err
		}
		got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (p [2]string, err error) {
			return p, r.Scan(&p[0], &p[1])
		})
		if err != nil {
			return nil, nil, err
		}
		pairs = append(pairs, got...)
	}
	for _, p := range pairs {
		drop, build = append(drop, p[0]), append([]string{p[1]}, build...)
	}
	return drop, build, nil
}

// copyPostgres writes sh's operations and events with two COPYs at once,
// each regenerating the operations it needs.
func copyPostgres(ctx context.Context, pool *pgxpool.Pool, sh seedShape) error {
	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Add(2)
	go func() {
		defer wg.Done()
		i := 0
		_, errs[0] = pool.CopyFrom(ctx, pgx.Identifier{"operation_ledger"}, seedLedgerColumns, pgx.CopyFromFunc(func() ([]any, error) {
			if i == sh.n {
				return nil, nil
			}
			i++
			return sh.op(i - 1).ledgerRow(), nil
		}))
	}()
	go func() {
		defer wg.Done()
		i := 0
		var pending [][]any
		_, errs[1] = pool.CopyFrom(ctx, pgx.Identifier{"operation_events"}, seedEventColumns, pgx.CopyFromFunc(func() ([]any, error) {
			for len(pending) == 0 {
				if i == sh.n {
					return nil, nil
				}
				pending = sh.op(i).eventRows()
				i++
			}
			row := pending[0]
			pending = pending[1:]
			return row, nil
		}))
	}()
	wg.Wait()
	if errs[0] != nil {
		return fmt.Errorf("operations: %w", errs[0])
	}
	if errs[1] != nil {
		return fmt.Errorf("events: %w", errs[1])
	}
	return nil
}

// buildPostgres runs the build statements on two connections: the
// indexes in parallel, then the keys, then the foreign keys that need
// them.
func buildPostgres(ctx context.Context, pool *pgxpool.Pool, build []string) error {
	var phases [3][]string
	for _, s := range build {
		switch {
		case strings.Contains(s, " FOREIGN KEY "):
			phases[2] = append(phases[2], s)
		case strings.HasPrefix(s, "ALTER TABLE"):
			phases[1] = append(phases[1], s)
		default:
			phases[0] = append(phases[0], s)
		}
	}
	for _, phase := range phases {
		work := make(chan string)
		var wg sync.WaitGroup
		var mu sync.Mutex
		var first error
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for s := range work {
					if err := buildOne(ctx, pool, s); err != nil {
						mu.Lock()
						first = cmpOr(first, err)
						mu.Unlock()
					}
				}
			}()
		}
		for _, s := range phase {
			work <- s
		}
		close(work)
		wg.Wait()
		if first != nil {
			return first
		}
	}
	return nil
}

func buildOne(ctx context.Context, pool *pgxpool.Pool, stmt string) error {
	c, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	// More sort memory than the default 64 MB keeps a large index's sort
	// out of temporary files; it lasts for this transaction only.
	tx, err := c.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after Commit, a no-op
	if _, err := tx.Exec(ctx, `SET LOCAL maintenance_work_mem = '256MB'`); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, stmt); err != nil {
		return fmt.Errorf("%s: %w", stmt, err)
	}
	return tx.Commit(ctx)
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// seedSQLiteFile creates (migrates) the SQLite file at path, checks it
// holds no operations and loads sh in one transaction, the seeded tables'
// secondary indexes dropped around the load.
func seedSQLiteFile(ctx context.Context, path string, sh seedShape) (steps []seedStep, err error) {
	if err := timed(&steps, "migrate", func() error {
		st, err := sqlite.Open(ctx, path, time.Now)
		if err != nil {
			return err
		}
		return st.Close()
	}); err != nil {
		return steps, err
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)")
	if err != nil {
		return steps, err
	}
	defer db.Close()
	var some bool
	if err := db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM operation_ledger)`).Scan(&some); err != nil {
		return steps, err
	}
	if some {
		return steps, fmt.Errorf("%s already holds operations: seed a new file", path)
	}
	type index struct{ name, sql string }
	var idx []index
	err = timed(&steps, "drop secondary indexes", func() error {
		rows, err := db.QueryContext(ctx, `SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL
			AND tbl_name IN ('operation_ledger', 'operation_events', 'operation_objects') ORDER BY name`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var i index
			if err := rows.Scan(&i.name, &i.sql); err != nil {
				rows.Close()
				return err
			}
			idx = append(idx, i)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, i := range idx {
			if _, err := db.ExecContext(ctx, `DROP INDEX "`+i.name+`"`); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return steps, err
	}
	if err := timed(&steps, "insert (one transaction)", func() error { return insertSQLite(ctx, db, sh) }); err != nil {
		return steps, err
	}
	err = timed(&steps, "build indexes, analyse", func() error {
		for _, i := range idx {
			if _, err := db.ExecContext(ctx, i.sql); err != nil {
				return fmt.Errorf("%s: %w", i.sql, err)
			}
		}
		_, err := db.ExecContext(ctx, "ANALYZE")
		return err
	})
	return steps, err
}

// insertSQLite writes sh in multi-row INSERTs of sqliteSeedRows rows,
// all in one transaction, with ids and times in SQLite's forms (text,
// microseconds). The operation_objects and figure triggers fire per row.
func insertSQLite(ctx context.Context, db *sql.DB, sh seedShape) error {
	const sqliteSeedRows = 400
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit, a no-op
	insert := func(table string, cols []string, rows [][]any) error {
		if len(rows) == 0 {
			return nil
		}
		one := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
		args := make([]any, 0, len(rows)*len(cols))
		for _, r := range rows {
			for _, v := range r {
				switch v := v.(type) {
				case [16]byte:
					args = append(args, uuidText(v))
				case time.Time:
					args = append(args, v.UnixMicro())
				default:
					args = append(args, v)
				}
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO `+table+` (`+strings.Join(cols, ", ")+`) VALUES `+
			strings.TrimSuffix(strings.Repeat(one+", ", len(rows)), ", "), args...)
		return err
	}
	for _, t := range sh.tenants {
		if _, err := tx.ExecContext(ctx, `INSERT INTO tenants (tenant_id, created_at) VALUES (?, ?) ON CONFLICT DO NOTHING`,
			t, sh.now.Add(-seedSpan-time.Hour).UnixMicro()); err != nil {
			return err
		}
	}
	for from := 0; from < sh.n; from += sqliteSeedRows {
		var ops, events [][]any
		for i := from; i < min(from+sqliteSeedRows, sh.n); i++ {
			op := sh.op(i)
			ops = append(ops, op.ledgerRow())
			events = append(events, op.eventRows()...)
		}
		if err := insert("operation_ledger", seedLedgerColumns, ops); err != nil {
			return err
		}
		if err := insert("operation_events", seedEventColumns, events); err != nil {
			return err
		}
	}
	return tx.Commit()
}
