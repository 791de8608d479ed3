-- The assembled reads: listings, the queue, the state counts and the
-- search. Each statement's TEMPLATE blocks are spliced in by the driver
-- (reads.go) from the conditions ledger/internal/sqlfilter builds; the
-- default text of a block is what sqlc parses and types. Every read is a
-- walk of an index, at most a page per tenant (see reads.go).

-- name: OperationList :many
-- Every tenant's listing, or one tenant's: one backward walk of an index
-- that ends in created_at. Qualified in the ORDER BY: a bare operation_id
-- names the output column, its text.
SELECT tenant_id, operation_id::text AS operation_id, operation_type, intent_ref, target, NULL::bytea AS payload, payload_hash,
       remote_key::text AS remote_key, state, fence_token, attempt_count, lease_expires_at, remote_ref,
       retry_window_end, deadline, next_reconcile_at, reason, created_at, updated_at, last_sent_at,
       first_claimed_at, retry_window_micros
  FROM operation_ledger /* TEMPLATE_BEGIN: where */ WHERE true /* TEMPLATE_END */
 ORDER BY operation_ledger.created_at DESC, operation_ledger.operation_id DESC LIMIT @max;

-- name: OperationListTenants :many
-- A set of tenants' listing: each tenant's walk, at most a page, merged.
SELECT tenant_id, operation_id::text AS operation_id, operation_type, intent_ref, target, NULL::bytea AS payload, payload_hash,
       remote_key::text AS remote_key, state, fence_token, attempt_count, lease_expires_at, remote_ref,
       retry_window_end, deadline, next_reconcile_at, reason, created_at, updated_at, last_sent_at,
       first_claimed_at, retry_window_micros
  FROM unnest(@tenants::text[]) AS t(tenant),
       LATERAL (SELECT * FROM operation_ledger /* TEMPLATE_BEGIN: where */ WHERE tenant_id = t.tenant /* TEMPLATE_END */
                 ORDER BY created_at DESC, operation_id DESC LIMIT @max) AS operation_ledger
 ORDER BY operation_ledger.created_at DESC, operation_ledger.operation_id DESC LIMIT @max;

-- name: QueueList :many
-- The queue of every tenant or one: a walk per state, merged. 18 and 2 are
-- created_at and the operation's id (as text, which orders as the uuid
-- does).
SELECT * FROM (
  /* TEMPLATE_BEGIN: walk */ (SELECT tenant_id, operation_id::text AS operation_id, operation_type, intent_ref, target, NULL::bytea AS payload, payload_hash,
       remote_key::text AS remote_key, state, fence_token, attempt_count, lease_expires_at, remote_ref,
       retry_window_end, deadline, next_reconcile_at, reason, created_at, updated_at, last_sent_at,
       first_claimed_at, retry_window_micros
  FROM operation_ledger /* TEMPLATE_BEGIN: where */ WHERE true /* TEMPLATE_END */
 ORDER BY created_at /* TEMPLATE_BEGIN: dir */ ASC /* TEMPLATE_END */, operation_id /* TEMPLATE_BEGIN: dir */ ASC /* TEMPLATE_END */
 LIMIT @max) /* TEMPLATE_END */
) AS queue ORDER BY 18 /* TEMPLATE_BEGIN: dir */ ASC /* TEMPLATE_END */, 2 /* TEMPLATE_BEGIN: dir */ ASC /* TEMPLATE_END */ LIMIT @max;

-- name: QueueListTenants :many
-- A set of tenants' queue: a walk per state and tenant, merged.
SELECT * FROM (
  /* TEMPLATE_BEGIN: walk */ (SELECT tenant_id, operation_id::text AS operation_id, operation_type, intent_ref, target, NULL::bytea AS payload, payload_hash,
       remote_key::text AS remote_key, state, fence_token, attempt_count, lease_expires_at, remote_ref,
       retry_window_end, deadline, next_reconcile_at, reason, created_at, updated_at, last_sent_at,
       first_claimed_at, retry_window_micros
  FROM unnest(@tenants::text[]) AS t(tenant),
       LATERAL (SELECT * FROM operation_ledger /* TEMPLATE_BEGIN: where */ WHERE tenant_id = t.tenant /* TEMPLATE_END */
                 ORDER BY created_at /* TEMPLATE_BEGIN: dir */ ASC /* TEMPLATE_END */, operation_id /* TEMPLATE_BEGIN: dir */ ASC /* TEMPLATE_END */
                 LIMIT @max) AS operation_ledger) /* TEMPLATE_END */
) AS queue ORDER BY 18 /* TEMPLATE_BEGIN: dir */ ASC /* TEMPLATE_END */, 2 /* TEMPLATE_BEGIN: dir */ ASC /* TEMPLATE_END */ LIMIT @max;

-- name: StateCount :many
-- One part per state, each stopping at @cap rows.
/* TEMPLATE_BEGIN: part */ SELECT /* TEMPLATE_BEGIN: state */ 'PREPARED' /* TEMPLATE_END */::text AS state, count(*) AS n
  FROM (SELECT FROM operation_ledger /* TEMPLATE_BEGIN: where */ WHERE true /* TEMPLATE_END */
        /* TEMPLATE_BEGIN: order */ ORDER BY created_at DESC /* TEMPLATE_END */ LIMIT @cap) AS capped /* TEMPLATE_END */;

-- name: OperationSearch :many
-- A search of named tenants: a union of index look-ups, newest first.
/* TEMPLATE_BEGIN: branch */ SELECT tenant_id, operation_id::text AS operation_id, operation_type, intent_ref, target, NULL::bytea AS payload, payload_hash,
       remote_key::text AS remote_key, state, fence_token, attempt_count, lease_expires_at, remote_ref,
       retry_window_end, deadline, next_reconcile_at, reason, created_at, updated_at, last_sent_at,
       first_claimed_at, retry_window_micros
  FROM operation_ledger /* TEMPLATE_BEGIN: hint */ /* TEMPLATE_END */ /* TEMPLATE_BEGIN: where */ WHERE true /* TEMPLATE_END */ /* TEMPLATE_END */
 ORDER BY 18 DESC, 2 DESC LIMIT @max;

-- name: OperationSearchAllTenants :many
-- A search of every tenant: the tenants that have operations, found by a
-- skip over an index that leads with the tenant (one probe each), since
-- only the remote key is indexed without the tenant; then the look-ups.
WITH RECURSIVE tenants (tenant) AS (
    SELECT min(tenant_id) FROM operation_ledger
    UNION ALL SELECT (SELECT min(tenant_id) FROM operation_ledger WHERE tenant_id > tenant)
    FROM tenants WHERE tenant IS NOT NULL)
/* TEMPLATE_BEGIN: branch */ SELECT tenant_id, operation_id::text AS operation_id, operation_type, intent_ref, target, NULL::bytea AS payload, payload_hash,
       remote_key::text AS remote_key, state, fence_token, attempt_count, lease_expires_at, remote_ref,
       retry_window_end, deadline, next_reconcile_at, reason, created_at, updated_at, last_sent_at,
       first_claimed_at, retry_window_micros
  FROM operation_ledger /* TEMPLATE_BEGIN: hint */ /* TEMPLATE_END */ /* TEMPLATE_BEGIN: where */ WHERE true /* TEMPLATE_END */ /* TEMPLATE_END */
 ORDER BY 18 DESC, 2 DESC LIMIT @max;
