-- name: SchemaVersionsApplied :many
-- Goose records an applied migration as a row with is_applied; going down
-- deletes the row.
SELECT DISTINCT g.version_id FROM goose_db_version g WHERE g.is_applied AND g.version_id > 0 ORDER BY g.version_id;

-- name: SchemaVersionLatest :one
SELECT CAST(COALESCE(MAX(g.version_id), 0) AS bigint) AS version FROM goose_db_version g WHERE g.is_applied;

-- name: LedgerColumnFacts :one
-- The columns the drill's rules need, in the schema the connection works in.
SELECT COALESCE(bool_or(c.column_name = 'payload_hash'), false)::bool AS payload_hash,
       COALESCE(bool_or(c.column_name = 'fence_token'), false)::bool AS fence_token,
       COALESCE(bool_or(c.column_name = 'lease_expires_at'), false)::bool AS lease_expires_at
  FROM information_schema.columns c
 WHERE c.table_schema = current_schema() AND c.table_name = 'operation_ledger';

-- name: LedgerIntentIndex :many
-- The unique, non-partial index over exactly (tenant_id, operation_type,
-- intent_ref): the identity constraint.
SELECT i.relname::text AS name FROM pg_catalog.pg_index x
  JOIN pg_catalog.pg_class i ON i.oid = x.indexrelid
  JOIN pg_catalog.pg_class t ON t.oid = x.indrelid
 WHERE t.relname = 'operation_ledger' AND t.relnamespace = current_schema()::regnamespace
   AND x.indisunique AND x.indpred IS NULL
   AND (SELECT array_agg(a.attname::text ORDER BY a.attname::text) FROM pg_catalog.pg_attribute a
         WHERE a.attrelid = t.oid AND a.attnum = ANY(x.indkey))
       = ARRAY['intent_ref', 'operation_type', 'tenant_id']
 ORDER BY i.relname LIMIT 1;
