package postgres_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// planLoad fills a migrated database with the shape production has: rows
// operations over 90 days before now, 50 tenants, every tenant with every
// state — 1% each PREPARED, IN_FLIGHT (half with an expired lease) and
// UNKNOWN (half due), 1% FAILED_TERMINAL, 0.1% ESCALATED, the rest
// SUCCEEDED — with the event of their last transition, callbacks for ten
// tenants, webhook deliveries, quarantine, findings, resolutions, conflicts
// and tokens.
// Operation n (1…rows) is tenant-(n % 50) with intent-n; its state comes
// from (n / 50) % 100, so no state belongs to one tenant. Its target is
// payments, but payouts for the blocks of 5,000 with (n / 5000) % 50 = 7
// (2% of rows, of every tenant and state; 5% of 100,000), the rare target
// the console filters by.
//
// $1 is now, $2 the row count, $3 the seconds between two creations.
var planLoad = []string{`
INSERT INTO operation_ledger (tenant_id, operation_id, operation_type, intent_ref, target, payload,
	payload_hash, remote_key, state, fence_token, attempt_count, lease_expires_at, remote_ref,
	retry_window_end, next_reconcile_at, created_at, updated_at, last_sent_at)
SELECT 'tenant-' || (g % 50), gen_random_uuid(), 'charge', 'intent-' || g,
	CASE WHEN (g / 5000) % 50 = 7 THEN 'payouts' ELSE 'payments' END, p.payload,
	sha256(p.payload), gen_random_uuid(), s.state,
	CASE s.state WHEN 'PREPARED' THEN 0 ELSE 1 END, CASE s.state WHEN 'PREPARED' THEN 0 ELSE 1 END,
	CASE s.state WHEN 'IN_FLIGHT' THEN $1::timestamptz + ((g % 600) - 300) * interval '1 second' END,
	CASE WHEN s.state IN ('SUCCEEDED', 'FAILED_TERMINAL') THEN 'ref-' || g END,
	c.at + interval '1 day',
	CASE s.state WHEN 'UNKNOWN' THEN $1::timestamptz + ((g % 7200) - 3600) * interval '1 second' END,
	c.at, c.at + interval '2 seconds',
	CASE WHEN s.state <> 'PREPARED' THEN c.at + interval '1 second' END
FROM generate_series(1, $2::int) g,
	LATERAL (SELECT $1::timestamptz - g * $3::float8 * interval '1 second' AS at) c,
	LATERAL (SELECT convert_to('{"amount":' || g || ',"currency":"EUR"}', 'UTF8') AS payload) p,
	LATERAL (SELECT CASE
		WHEN (g / 50) % 1000 = 4 THEN 'ESCALATED'
		WHEN (g / 50) % 100 = 0 THEN 'PREPARED'
		WHEN (g / 50) % 100 = 1 THEN 'IN_FLIGHT'
		WHEN (g / 50) % 100 = 2 THEN 'UNKNOWN'
		WHEN (g / 50) % 100 = 3 THEN 'FAILED_TERMINAL'
		ELSE 'SUCCEEDED' END AS state) s`, `
INSERT INTO operation_events (tenant_id, operation_id, from_state, to_state, fence_token, actor, reason, at)
SELECT tenant_id, operation_id, CASE WHEN state <> 'PREPARED' THEN 'IN_FLIGHT' END, state, fence_token,
	CASE state WHEN 'PREPARED' THEN 'client' WHEN 'UNKNOWN' THEN 'sweeper' ELSE 'executor' END, '', updated_at
FROM operation_ledger`, `
INSERT INTO tenant_callbacks (tenant_id, url, secret, created_at, updated_at)
SELECT 'tenant-' || g, 'https://tenant-' || g || '.example/settle', sha256(g::text::bytea), $1, $1
FROM generate_series(0, 9) g`, `
INSERT INTO callback_outbox (tenant_id, operation_id, state, fence_token, created_at, next_attempt_at,
	attempts, delivered_at, last_status)
SELECT o.tenant_id, o.operation_id, o.state, o.fence_token, o.updated_at,
	CASE WHEN n % 100 = 7 THEN $1::timestamptz + ((n % 120) - 60) * interval '1 second' ELSE o.updated_at END,
	1, CASE WHEN n % 100 <> 7 THEN o.updated_at + interval '1 second' END, 200
FROM operation_ledger o JOIN tenant_callbacks USING (tenant_id),
	LATERAL (SELECT substr(o.intent_ref, 8)::bigint AS n) i
WHERE o.state IN ('SUCCEEDED', 'FAILED_TERMINAL', 'ESCALATED')`, `
INSERT INTO webhook_inbox (target, body_sha256, body, received_at, next_attempt_at, attempts,
	processed_at, outcome)
SELECT 'payments', sha256(('delivery-' || g)::bytea), CASE WHEN g % 1000 = 0 THEN '{}'::bytea END,
	c.at, CASE WHEN g % 1000 = 0 THEN $1::timestamptz + ((g % 120) - 60) * interval '1 second' END, 1,
	CASE WHEN g % 1000 <> 0 THEN c.at + interval '1 second' END,
	CASE WHEN g % 1000 <> 0 THEN 'applied' ELSE '' END
FROM generate_series(1, $2::int / 2) g,
	LATERAL (SELECT $1::timestamptz - g * $3::float8 * 2 * interval '1 second' AS at) c`, `
INSERT INTO quarantine (target, delivery_id, reason, event_id, quarantined_at, resolved_at,
	resolved_by, resolution, claimed_tenant, scope_tenant)
SELECT 'payments', g, 'unknown reference', 'evt-' || g, $1::timestamptz - g * interval '1 minute',
	CASE WHEN g % 20 <> 0 THEN $1 END, CASE WHEN g % 20 <> 0 THEN 'cli:ops' ELSE '' END,
	CASE WHEN g % 20 <> 0 THEN 'ignored' ELSE '' END, t.tenant, t.tenant
FROM generate_series(1, $2::int / 100) g,
	LATERAL (SELECT CASE WHEN g % 10 = 0 THEN '' ELSE 'tenant-' || (g % 50) END AS tenant) t`, `
INSERT INTO actions (tenant_id, at, subject, actor_name, role, kind, object, operation_id, reason)
SELECT scope_tenant, resolved_at, resolved_by, 'ops', 'owner', 'quarantine.resolve', quarantine_id::text, '', resolution
FROM quarantine WHERE resolved_at IS NOT NULL`, `
INSERT INTO audit_findings (tenant_id, operation_id, target, kind, found_at, resolved_at)
SELECT tenant_id, operation_id, target, 'duplicate', updated_at + interval '1 hour',
	CASE WHEN substr(intent_ref, 8)::bigint % 3 <> 0 THEN updated_at + interval '1 day' END
FROM operation_ledger WHERE state = 'SUCCEEDED' AND substr(intent_ref, 8)::bigint % 1000 = 5`, `
INSERT INTO resolutions (tenant_id, operation_id, fence_token, to_state, reason, proposed_by,
	proposed_at, decided_by, decided_at, decision, decision_why, kind)
SELECT tenant_id, operation_id, fence_token, 'SUCCEEDED', 'seen in the dashboard', 'cli:alice',
	updated_at, 'cli:bob', updated_at + interval '1 hour', 'rejected', 'no evidence', 'confirm_succeeded'
FROM operation_ledger WHERE state = 'ESCALATED'`, `
INSERT INTO payload_conflicts (tenant_id, operation_id, operation_type, intent_ref, stored_hash,
	rejected_hash, at)
SELECT tenant_id, operation_id, operation_type, intent_ref, payload_hash, sha256(payload_hash), updated_at
FROM operation_ledger WHERE substr(intent_ref, 8)::bigint % 100 = 9`, `
INSERT INTO api_tokens (token_id, tenant_id, name, token_hash, created_at, revoked_at)
SELECT 'tok-' || g, 'tenant-' || (g % 50), 'plan token ' || g, sha256(('token-' || g)::bytea), $1::timestamptz - g * interval '1 hour',
	CASE WHEN g % 4 = 0 THEN $1 END
FROM generate_series(1, 1000) g`, `
INSERT INTO audit_cursor (target, last_created_at, last_operation_id, updated_at)
SELECT target, created_at, operation_id, $1 FROM operation_ledger
WHERE state = 'SUCCEEDED' ORDER BY created_at LIMIT 1`,
}

// load fills the schema (see planLoad), analyses it as autovacuum would
// have by the time a table is that large, and describes the result.
//
// It loads the way a restore does: constraints and indexes are dropped
// first and built again after. Maintaining ten indexes row by row, and
// locking each referenced operation for every foreign-key check, made a
// load of 10 million operations take hours on a small server. Building
// them again also validates every loaded row.
func load(ctx context.Context, pool *pgxpool.Pool, now time.Time, rows int) (string, error) {
	start := time.Now()
	// Dropped: foreign keys, then the keys they reference, then the other
	// indexes; built again in the opposite order.
	cons, err := collectRows(ctx, pool, `SELECT 'ALTER TABLE ' || conrelid::regclass || ' DROP CONSTRAINT ' || quote_ident(conname),
			'ALTER TABLE ' || conrelid::regclass || ' ADD CONSTRAINT ' || quote_ident(conname) || ' ' || pg_get_constraintdef(oid)
		FROM pg_constraint WHERE contype IN ('f', 'p', 'u') AND connamespace = current_schema()::regnamespace
		ORDER BY contype = 'f' DESC`)
	if err != nil {
		return "", err
	}
	idxs, err := collectRows(ctx, pool, `SELECT 'DROP INDEX ' || quote_ident(i.relname), pg_get_indexdef(x.indexrelid)
		FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
		WHERE i.relnamespace = current_schema()::regnamespace AND NOT EXISTS (
			SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid AND c.contype IN ('p', 'u'))`)
	if err != nil {
		return "", err
	}
	var drop, build []string
	for _, c := range append(cons, idxs...) {
		drop, build = append(drop, c[0]), append([]string{c[1]}, build...)
	}
	for _, stmt := range drop {
		if _, err := pool.Exec(ctx, stmt); err != nil {
			return "", fmt.Errorf("load: %s: %w", stmt, err)
		}
	}
	// The figure rollups' trigger looks each event's operation up by the
	// primary key dropped above: the rollups are built after the keys.
	if _, err := pool.Exec(ctx, `ALTER TABLE operation_events DISABLE TRIGGER operation_events_figure_rollup`); err != nil {
		return "", fmt.Errorf("load: %w", err)
	}
	step := (90 * 24 * time.Hour).Seconds() / float64(rows)
	for _, stmt := range planLoad {
		args := []any{now, rows, step}
		if _, err := pool.Exec(ctx, stmt, args[:params(stmt)]...); err != nil {
			return "", fmt.Errorf("load: %w\n%s", err, stmt)
		}
	}
	loaded := time.Since(start)
	for _, stmt := range build {
		if _, err := pool.Exec(ctx, stmt); err != nil {
			return "", fmt.Errorf("load: %s: %w", stmt, err)
		}
	}
	for _, stmt := range []string{`SELECT figure_rollup_backfill()`,
		`ALTER TABLE operation_events ENABLE TRIGGER operation_events_figure_rollup`} {
		if _, err := pool.Exec(ctx, stmt); err != nil {
			return "", fmt.Errorf("load: %s: %w", stmt, err)
		}
	}
	built := time.Since(start) - loaded
	tables, err := collectRows(ctx, pool, `SELECT relname::text FROM pg_class
		WHERE relkind = 'r' AND relnamespace = current_schema()::regnamespace`)
	if err != nil {
		return "", err
	}
	for _, table := range tables {
		if _, err := pool.Exec(ctx, "VACUUM (ANALYZE) "+table[0]); err != nil {
			return "", fmt.Errorf("vacuum %s: %w", table[0], err)
		}
	}
	var size string
	err = pool.QueryRow(ctx, `SELECT pg_size_pretty(pg_total_relation_size('operation_ledger'))`).Scan(&size)
	return fmt.Sprintf("rows %s, indexes and keys %s, vacuum and analyse %s; operation_ledger with its indexes %s",
		loaded.Round(time.Second), built.Round(time.Second), (time.Since(start) - loaded - built).Round(time.Second), size), err
}

// bigTableRows is the size from which a table must never be read whole.
const bigTableRows = 10_000

// sizes returns, for the loaded schema, which tables are big and the table
// of each index.
func sizes(ctx context.Context, pool *pgxpool.Pool) (big map[string]bool, tableOf map[string]string, err error) {
	rows, err := collectRows(ctx, pool, `SELECT c.relname::text, t.relname::text, t.reltuples::bigint::text
		FROM pg_class t LEFT JOIN pg_index i ON i.indrelid = t.oid LEFT JOIN pg_class c ON c.oid = i.indexrelid
		WHERE t.relkind = 'r' AND t.relnamespace = current_schema()::regnamespace`)
	if err != nil {
		return nil, nil, err
	}
	big, tableOf = map[string]bool{}, map[string]string{}
	for _, r := range rows {
		n, _ := strconv.ParseInt(r[2], 10, 64)
		big[r[1]] = n >= bigTableRows
		tableOf[r[0]] = r[1]
	}
	return big, tableOf, nil
}

func collectRows(ctx context.Context, pool *pgxpool.Pool, sql string) ([][]string, error) {
	rows, err := pool.Query(ctx, sql)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) ([]string, error) {
		vals, err := r.Values()
		out := make([]string, len(vals))
		for i, v := range vals {
			if v != nil {
				out[i] = v.(string)
			}
		}
		return out, err
	})
}

// params returns how many of $1…$3 stmt uses: pgx refuses extra arguments.
func params(stmt string) int {
	for n := 3; n > 0; n-- {
		if strings.Contains(stmt, "$"+strconv.Itoa(n)) {
			return n
		}
	}
	return 0
}
