-- The assembled reads: listings, the queue, the state counts and the
-- search. Each statement's TEMPLATE blocks are spliced in by the driver
-- (reads.go) from the conditions ledger/internal/sqlfilter builds; the
-- default text of a block is what sqlc parses and types. A statement holds
-- only the conditions the filter sets: SQLite's planner cannot use an
-- index for a condition that an empty parameter switches off.

-- name: OperationList :many
-- Every tenant's listing: one backward walk of the created, state or
-- target index without the tenant (00015, 00006).
SELECT tenant_id, operation_id, operation_type, intent_ref, target, CAST(NULL AS BLOB) AS payload, payload_hash,
       remote_key, state, fence_token, attempt_count, lease_expires_at, remote_ref,
       retry_window_end, deadline, next_reconcile_at, reason, created_at, updated_at, last_sent_at,
       first_claimed_at, retry_window_micros
  FROM operation_ledger /* TEMPLATE_BEGIN: where */ WHERE true /* TEMPLATE_END */
 ORDER BY created_at DESC, operation_id DESC LIMIT CAST(@max AS INTEGER);

-- name: OperationWalk :many
-- One walk of an index: a tenant's listing, or the queue's one state.
SELECT * FROM (SELECT tenant_id, operation_id, operation_type, intent_ref, target, CAST(NULL AS BLOB) AS payload, payload_hash,
       remote_key, state, fence_token, attempt_count, lease_expires_at, remote_ref,
       retry_window_end, deadline, next_reconcile_at, reason, created_at, updated_at, last_sent_at,
       first_claimed_at, retry_window_micros
  FROM operation_ledger /* TEMPLATE_BEGIN: where */ WHERE true /* TEMPLATE_END */
 ORDER BY created_at /* TEMPLATE_BEGIN: dir */ DESC /* TEMPLATE_END */, operation_id /* TEMPLATE_BEGIN: dir */ DESC /* TEMPLATE_END */
 LIMIT CAST(@max AS INTEGER)) AS w;

-- name: OperationWalks :many
-- Several walks (a tenant's, a state's): a compound of subqueries, each with
-- its own ORDER BY and LIMIT, merged by the outer ORDER BY.
SELECT * FROM (
  /* TEMPLATE_BEGIN: walk */ SELECT * FROM (SELECT tenant_id, operation_id, operation_type, intent_ref, target, CAST(NULL AS BLOB) AS payload, payload_hash,
       remote_key, state, fence_token, attempt_count, lease_expires_at, remote_ref,
       retry_window_end, deadline, next_reconcile_at, reason, created_at, updated_at, last_sent_at,
       first_claimed_at, retry_window_micros
  FROM operation_ledger /* TEMPLATE_BEGIN: where */ WHERE true /* TEMPLATE_END */
 ORDER BY created_at /* TEMPLATE_BEGIN: dir */ DESC /* TEMPLATE_END */, operation_id /* TEMPLATE_BEGIN: dir */ DESC /* TEMPLATE_END */
 LIMIT CAST(@max AS INTEGER)) AS w /* TEMPLATE_END */
) AS walks
 ORDER BY created_at /* TEMPLATE_BEGIN: dir */ DESC /* TEMPLATE_END */, operation_id /* TEMPLATE_BEGIN: dir */ DESC /* TEMPLATE_END */
 LIMIT CAST(@max AS INTEGER);

-- name: StateCount :many
-- One part per state, each stopping at @cap rows. (The outer SELECT keeps
-- the block's end: sqlc drops a statement's trailing comment.)
SELECT state, n FROM (
  /* TEMPLATE_BEGIN: part */ SELECT CAST(/* TEMPLATE_BEGIN: state */ 'PREPARED' /* TEMPLATE_END */ AS TEXT) AS state, count(*) AS n
  FROM (SELECT 1 FROM operation_ledger /* TEMPLATE_BEGIN: where */ WHERE true /* TEMPLATE_END */
        /* TEMPLATE_BEGIN: order */ ORDER BY created_at DESC /* TEMPLATE_END */ LIMIT CAST(@cap AS INTEGER)) /* TEMPLATE_END */
) AS counts;

-- name: OperationSearch :many
-- A search of named tenants: a union of index look-ups, newest first.
/* TEMPLATE_BEGIN: branch */ SELECT tenant_id, operation_id, operation_type, intent_ref, target, CAST(NULL AS BLOB) AS payload, payload_hash,
       remote_key, state, fence_token, attempt_count, lease_expires_at, remote_ref,
       retry_window_end, deadline, next_reconcile_at, reason, created_at, updated_at, last_sent_at,
       first_claimed_at, retry_window_micros
  FROM operation_ledger /* TEMPLATE_BEGIN: hint */ /* TEMPLATE_END */ /* TEMPLATE_BEGIN: where */ WHERE true /* TEMPLATE_END */ /* TEMPLATE_END */
 ORDER BY created_at DESC, operation_id DESC LIMIT CAST(@max AS INTEGER);

-- name: OperationSearchAllTenants :many
-- A search of every tenant: the tenants that have operations, found by a
-- skip over an index that leads with the tenant (one probe each), since
-- only the remote key is indexed without the tenant; then the look-ups.
WITH RECURSIVE tenants (tenant) AS (
    SELECT (SELECT tenant_id FROM operation_ledger ORDER BY tenant_id LIMIT 1)
    UNION ALL SELECT (SELECT tenant_id FROM operation_ledger WHERE tenant_id > tenant ORDER BY tenant_id LIMIT 1)
    FROM tenants WHERE tenant IS NOT NULL)
/* TEMPLATE_BEGIN: branch */ SELECT tenant_id, operation_id, operation_type, intent_ref, target, CAST(NULL AS BLOB) AS payload, payload_hash,
       remote_key, state, fence_token, attempt_count, lease_expires_at, remote_ref,
       retry_window_end, deadline, next_reconcile_at, reason, created_at, updated_at, last_sent_at,
       first_claimed_at, retry_window_micros
  FROM operation_ledger /* TEMPLATE_BEGIN: hint */ /* TEMPLATE_END */ /* TEMPLATE_BEGIN: where */ WHERE true /* TEMPLATE_END */ /* TEMPLATE_END */
 ORDER BY created_at DESC, operation_id DESC LIMIT CAST(@max AS INTEGER);
