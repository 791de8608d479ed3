#!/usr/bin/env bash
# Loads 10 million operations into a scratch schema of the PostgreSQL at
# $DATABASE_URL (default: the local test database), shaped like production
# (97% settled, 1% each PREPARED, IN_FLIGHT and UNKNOWN, 50 tenants), and
# prints the plan of every hot and support statement. Drops the schema after.
# Takes a few minutes; see docs/performance.md.
set -euo pipefail
cd "$(dirname "$0")/.."
url=${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test?sslmode=disable}
rows=${ROWS:-10000000}
schema=settle_plans_$$
up=$(for f in migrations/postgres/*.sql; do sed -n '/+goose Up/,/+goose Down/p' "$f" | grep -v '+goose'; done)
psql "$url" -v ON_ERROR_STOP=1 -q <<SQL
CREATE SCHEMA $schema;
SET search_path = $schema;
$up
\timing on
INSERT INTO operation_ledger (tenant_id, operation_id, operation_type, intent_ref, target, payload,
	payload_hash, remote_key, state, remote_ref, retry_window_end, created_at, updated_at,
	lease_expires_at, next_reconcile_at)
SELECT 'tenant-' || (g % 50), gen_random_uuid(), 'charge', 'intent-' || g, 'payments',
	'{"amount":100,"currency":"EUR"}', sha256(g::text::bytea), gen_random_uuid(),
	CASE g % 100 WHEN 0 THEN 'PREPARED' WHEN 1 THEN 'IN_FLIGHT' WHEN 2 THEN 'UNKNOWN' ELSE 'SUCCEEDED' END,
	CASE WHEN g % 100 > 2 THEN 'ref-' || g END, now(), now() - (g || ' seconds')::interval, now(),
	CASE WHEN g % 100 = 1 THEN now() END, CASE WHEN g % 100 = 2 THEN now() END
FROM generate_series(1, $rows) g;
VACUUM ANALYZE operation_ledger;
\timing off
SELECT pg_size_pretty(pg_total_relation_size('operation_ledger')) AS table_and_indexes;
\echo '--- by operation id'
EXPLAIN SELECT * FROM operation_ledger WHERE tenant_id = 'tenant-1' AND operation_id = '6f1c2f7e-0d7b-4a47-9b8e-2f0b1d1a9c11';
\echo '--- by intent reference'
EXPLAIN SELECT * FROM operation_ledger WHERE tenant_id = 'tenant-1' AND intent_ref = 'intent-51';
\echo '--- by remote reference'
EXPLAIN SELECT * FROM operation_ledger WHERE tenant_id = 'tenant-1' AND remote_ref = 'ref-51';
\echo '--- by remote key (webhooks)'
EXPLAIN SELECT * FROM operation_ledger WHERE remote_key = '6f1c2f7e-0d7b-4a47-9b8e-2f0b1d1a9c11';
\echo '--- newest operations of one tenant (API list, keyset page)'
EXPLAIN SELECT * FROM operation_ledger WHERE tenant_id = 'tenant-1' AND (created_at, operation_id) < (now(), '6f1c2f7e-0d7b-4a47-9b8e-2f0b1d1a9c11') ORDER BY created_at DESC, operation_id DESC LIMIT 51;
\echo '--- batch claim'
EXPLAIN SELECT tenant_id, operation_id FROM operation_ledger WHERE state = 'PREPARED' ORDER BY created_at LIMIT 100 FOR UPDATE SKIP LOCKED;
\echo '--- sweep'
EXPLAIN SELECT tenant_id, operation_id FROM operation_ledger WHERE state = 'IN_FLIGHT' AND lease_expires_at <= now() LIMIT 1000 FOR UPDATE SKIP LOCKED;
\echo '--- reconciler lease'
EXPLAIN SELECT tenant_id, operation_id FROM operation_ledger WHERE state = 'UNKNOWN' AND next_reconcile_at <= now() ORDER BY next_reconcile_at LIMIT 100 FOR UPDATE SKIP LOCKED;
DROP SCHEMA $schema CASCADE;
SQL
