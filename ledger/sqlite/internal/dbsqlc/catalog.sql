-- name: SchemaVersionsApplied :many
-- Goose records an applied migration as a row with is_applied; going down
-- deletes the row.
SELECT DISTINCT g.version_id FROM goose_db_version g WHERE g.is_applied AND g.version_id > 0 ORDER BY g.version_id;

-- name: SchemaVersionLatest :one
SELECT CAST(COALESCE(MAX(g.version_id), 0) AS INTEGER) AS version FROM goose_db_version g WHERE g.is_applied;

-- name: LedgerColumnNames :many
SELECT CAST(p.name AS TEXT) AS name FROM pragma_table_info('operation_ledger') p;

-- name: LedgerUniqueIndexColumns :many
-- An index's columns, one row per column, for the unique non-partial
-- indexes: a unique index over exactly the three is the identity
-- constraint.
SELECT CAST(il.name AS TEXT) AS index_name, CAST(ii.name AS TEXT) AS column_name
  FROM pragma_index_list('operation_ledger') il, pragma_index_info(il.name) ii
 WHERE il."unique" = 1 AND il.partial = 0 ORDER BY il.name, ii.name;
