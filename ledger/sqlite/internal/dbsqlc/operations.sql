-- name: OperationGet :one
SELECT tenant_id, operation_id, operation_type, intent_ref, target, payload, payload_hash,
       remote_key, state, fence_token, attempt_count, lease_expires_at, remote_ref,
       retry_window_end, deadline, next_reconcile_at, reason, created_at, updated_at, last_sent_at,
       first_claimed_at, retry_window_micros
  FROM operation_ledger WHERE tenant_id = @tenant_id AND operation_id = @operation_id;

-- name: OperationSummary :one
-- The payload read as NULL, for reads that never need it (the API's get).
SELECT tenant_id, operation_id, operation_type, intent_ref, target, CAST(NULL AS BLOB) AS payload, payload_hash,
       remote_key, state, fence_token, attempt_count, lease_expires_at, remote_ref,
       retry_window_end, deadline, next_reconcile_at, reason, created_at, updated_at, last_sent_at,
       first_claimed_at, retry_window_micros
  FROM operation_ledger WHERE tenant_id = @tenant_id AND operation_id = @operation_id;

-- name: OperationByIntent :one
SELECT tenant_id, operation_id, operation_type, intent_ref, target, payload, payload_hash,
       remote_key, state, fence_token, attempt_count, lease_expires_at, remote_ref,
       retry_window_end, deadline, next_reconcile_at, reason, created_at, updated_at, last_sent_at,
       first_claimed_at, retry_window_micros
  FROM operation_ledger WHERE tenant_id = @tenant_id AND operation_type = @operation_type AND intent_ref = @intent_ref;

-- name: OperationFind :many
-- Each branch is an index look-up (the planner is told which); id is the
-- reference as an operation id or remote key, NULL when it is not one.
SELECT tenant_id, operation_id, operation_type, intent_ref, target, payload, payload_hash,
       remote_key, state, fence_token, attempt_count, lease_expires_at, remote_ref,
       retry_window_end, deadline, next_reconcile_at, reason, created_at, updated_at, last_sent_at,
       first_claimed_at, retry_window_micros
  FROM operation_ledger b1 INDEXED BY operation_ledger_intent WHERE b1.tenant_id = @tenant_id AND b1.intent_ref = @ref
UNION SELECT tenant_id, operation_id, operation_type, intent_ref, target, payload, payload_hash,
       remote_key, state, fence_token, attempt_count, lease_expires_at, remote_ref,
       retry_window_end, deadline, next_reconcile_at, reason, created_at, updated_at, last_sent_at,
       first_claimed_at, retry_window_micros
  FROM operation_ledger b2 INDEXED BY operation_ledger_remote_ref WHERE b2.tenant_id = @tenant_id AND b2.remote_ref = @ref
UNION SELECT tenant_id, operation_id, operation_type, intent_ref, target, payload, payload_hash,
       remote_key, state, fence_token, attempt_count, lease_expires_at, remote_ref,
       retry_window_end, deadline, next_reconcile_at, reason, created_at, updated_at, last_sent_at,
       first_claimed_at, retry_window_micros
  FROM operation_ledger b3 WHERE b3.tenant_id = @tenant_id AND b3.operation_id = sqlc.narg(id)
UNION SELECT tenant_id, operation_id, operation_type, intent_ref, target, payload, payload_hash,
       remote_key, state, fence_token, attempt_count, lease_expires_at, remote_ref,
       retry_window_end, deadline, next_reconcile_at, reason, created_at, updated_at, last_sent_at,
       first_claimed_at, retry_window_micros
  FROM operation_ledger b4 WHERE b4.remote_key = sqlc.narg(id) AND b4.tenant_id = @tenant_id
ORDER BY created_at DESC LIMIT 50;

-- name: EventList :many
SELECT event_id, tenant_id, operation_id, CAST(coalesce(from_state, '') AS TEXT) AS from_state,
       to_state, fence_token, actor, reason, evidence, at
  FROM operation_events WHERE tenant_id = @tenant_id AND operation_id = @operation_id
 ORDER BY event_id;

-- name: PayloadConflictCount :one
SELECT count(*) FROM payload_conflicts WHERE tenant_id = @tenant_id AND at >= @since AND at < @until;

-- name: PayloadConflictInsert :exec
INSERT INTO payload_conflicts (tenant_id, operation_id, operation_type, intent_ref, stored_hash, rejected_hash, at)
VALUES (@tenant_id, @operation_id, @operation_type, @intent_ref, @stored_hash, @rejected_hash, @at);

-- name: OperationInsertBatch :many
-- The operations of @creations (a JSON array; bytes in hex), PREPARED, in
-- one statement; a row whose intent exists is skipped and not returned.
-- (WHERE true: an upsert's SELECT needs one, or ON reads as a join's.)
INSERT INTO operation_ledger (tenant_id, operation_id, operation_type, intent_ref, target, payload, payload_hash,
    remote_key, state, retry_window_end, retry_window_micros, deadline, created_at, updated_at)
SELECT json_extract(c.value, '$.tenant_id'), json_extract(c.value, '$.operation_id'),
       json_extract(c.value, '$.operation_type'), json_extract(c.value, '$.intent_ref'),
       json_extract(c.value, '$.target'), unhex(json_extract(c.value, '$.payload')),
       unhex(json_extract(c.value, '$.payload_hash')), json_extract(c.value, '$.remote_key'), 'PREPARED',
       json_extract(c.value, '$.retry_window_end'), json_extract(c.value, '$.retry_window_micros'),
       json_extract(c.value, '$.deadline'), json_extract(c.value, '$.created_at'),
       json_extract(c.value, '$.created_at')
  FROM json_each(sqlc.arg(creations)) c WHERE true
ON CONFLICT (tenant_id, operation_type, intent_ref) DO NOTHING
RETURNING tenant_id, operation_id, operation_type, intent_ref, target, payload, payload_hash,
       remote_key, state, fence_token, attempt_count, lease_expires_at, remote_ref,
       retry_window_end, deadline, next_reconcile_at, reason, created_at, updated_at, last_sent_at,
       first_claimed_at, retry_window_micros;

-- name: CreationEventsInsert :exec
-- The creation events of @creations (a JSON array of operation ids, their
-- evidence and time).
INSERT INTO operation_events (tenant_id, operation_id, from_state, to_state, fence_token, actor, reason, evidence, at)
SELECT json_extract(c.value, '$.tenant_id'), json_extract(c.value, '$.operation_id'), NULL, 'PREPARED', 0,
       'client', 'created', json_extract(c.value, '$.evidence'), json_extract(c.value, '$.at')
  FROM json_each(sqlc.arg(creations)) c;
