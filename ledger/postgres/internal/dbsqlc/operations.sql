-- name: OperationGet :one
SELECT tenant_id, operation_id::text AS operation_id, operation_type, intent_ref, target, payload, payload_hash,
       remote_key::text AS remote_key, state, fence_token, attempt_count, lease_expires_at, remote_ref,
       retry_window_end, deadline, next_reconcile_at, reason, created_at, updated_at, last_sent_at,
       first_claimed_at, retry_window_micros
  FROM operation_ledger WHERE tenant_id = @tenant_id AND operation_id = CAST(@operation_id::text AS uuid);

-- name: OperationSummary :one
-- The payload read as NULL, for reads that never need it (the API's get):
-- the row then costs the same whatever the payload's size.
SELECT tenant_id, operation_id::text AS operation_id, operation_type, intent_ref, target, NULL::bytea AS payload, payload_hash,
       remote_key::text AS remote_key, state, fence_token, attempt_count, lease_expires_at, remote_ref,
       retry_window_end, deadline, next_reconcile_at, reason, created_at, updated_at, last_sent_at,
       first_claimed_at, retry_window_micros
  FROM operation_ledger WHERE tenant_id = @tenant_id AND operation_id = CAST(@operation_id::text AS uuid);

-- name: OperationByIntent :one
SELECT tenant_id, operation_id::text AS operation_id, operation_type, intent_ref, target, payload, payload_hash,
       remote_key::text AS remote_key, state, fence_token, attempt_count, lease_expires_at, remote_ref,
       retry_window_end, deadline, next_reconcile_at, reason, created_at, updated_at, last_sent_at,
       first_claimed_at, retry_window_micros
  FROM operation_ledger WHERE tenant_id = @tenant_id AND operation_type = @operation_type AND intent_ref = @intent_ref;

-- name: OperationFind :many
-- Each branch is an index look-up; id is the reference as an operation id
-- or remote key, NULL when it is not one.
SELECT tenant_id, operation_id::text AS operation_id, operation_type, intent_ref, target, payload, payload_hash,
       remote_key::text AS remote_key, state, fence_token, attempt_count, lease_expires_at, remote_ref,
       retry_window_end, deadline, next_reconcile_at, reason, created_at, updated_at, last_sent_at,
       first_claimed_at, retry_window_micros
  FROM operation_ledger b1 WHERE b1.tenant_id = @tenant_id AND b1.intent_ref = @ref
UNION SELECT tenant_id, operation_id::text AS operation_id, operation_type, intent_ref, target, payload, payload_hash,
       remote_key::text AS remote_key, state, fence_token, attempt_count, lease_expires_at, remote_ref,
       retry_window_end, deadline, next_reconcile_at, reason, created_at, updated_at, last_sent_at,
       first_claimed_at, retry_window_micros
  FROM operation_ledger b2 WHERE b2.tenant_id = @tenant_id AND b2.remote_ref = @ref
UNION SELECT tenant_id, operation_id::text AS operation_id, operation_type, intent_ref, target, payload, payload_hash,
       remote_key::text AS remote_key, state, fence_token, attempt_count, lease_expires_at, remote_ref,
       retry_window_end, deadline, next_reconcile_at, reason, created_at, updated_at, last_sent_at,
       first_claimed_at, retry_window_micros
  FROM operation_ledger b3 WHERE b3.tenant_id = @tenant_id AND b3.operation_id = CAST(sqlc.narg(id)::text AS uuid)
UNION SELECT tenant_id, operation_id::text AS operation_id, operation_type, intent_ref, target, payload, payload_hash,
       remote_key::text AS remote_key, state, fence_token, attempt_count, lease_expires_at, remote_ref,
       retry_window_end, deadline, next_reconcile_at, reason, created_at, updated_at, last_sent_at,
       first_claimed_at, retry_window_micros
  FROM operation_ledger b4 WHERE b4.remote_key = CAST(sqlc.narg(id)::text AS uuid) AND b4.tenant_id = @tenant_id
ORDER BY created_at DESC LIMIT 50;

-- name: EventList :many
SELECT event_id, tenant_id, operation_id::text AS operation_id, coalesce(from_state, '')::text AS from_state,
       to_state, fence_token, actor, reason, evidence::text AS evidence, at
  FROM operation_events WHERE tenant_id = @tenant_id AND operation_id = CAST(@operation_id::text AS uuid)
 ORDER BY event_id;

-- name: PayloadConflictCount :one
SELECT count(*) FROM payload_conflicts WHERE tenant_id = @tenant_id AND at >= @since AND at < @until;
