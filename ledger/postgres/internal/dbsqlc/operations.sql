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

-- name: OperationInsertIfNew :one
-- The operation, PREPARED, and its creation event in one statement; no row
-- when the intent exists.
WITH ins AS (
    INSERT INTO operation_ledger (tenant_id, operation_id, operation_type, intent_ref, target,
        payload, payload_hash, remote_key, state, retry_window_end, retry_window_micros, deadline,
        created_at, updated_at)
    VALUES (@tenant_id, CAST(@operation_id::text AS uuid), @operation_type, @intent_ref, @target,
        @payload, @payload_hash, CAST(@remote_key::text AS uuid), 'PREPARED', @retry_window_end,
        @retry_window_micros, sqlc.narg(deadline)::timestamptz, @created_at, @created_at)
    ON CONFLICT (tenant_id, operation_type, intent_ref) DO NOTHING
    RETURNING *
), ev AS (
    INSERT INTO operation_events (tenant_id, operation_id, to_state, fence_token, actor, reason, evidence, at)
    SELECT ins.tenant_id, ins.operation_id, 'PREPARED', 0, 'client', 'created', @evidence::jsonb, ins.created_at FROM ins
)
SELECT ins.tenant_id, ins.operation_id::text AS operation_id, ins.operation_type, ins.intent_ref, ins.target,
       ins.payload, ins.payload_hash, ins.remote_key::text AS remote_key, ins.state, ins.fence_token,
       ins.attempt_count, ins.lease_expires_at, ins.remote_ref, ins.retry_window_end, ins.deadline,
       ins.next_reconcile_at, ins.reason, ins.created_at, ins.updated_at, ins.last_sent_at,
       ins.first_claimed_at, ins.retry_window_micros
  FROM ins;

-- name: PayloadConflictInsert :exec
INSERT INTO payload_conflicts (tenant_id, operation_id, operation_type, intent_ref, stored_hash, rejected_hash, at)
VALUES (@tenant_id, CAST(@operation_id::text AS uuid), @operation_type, @intent_ref, @stored_hash, @rejected_hash, @at);

-- name: OperationInsertBatch :many
-- The operations of @creations (a JSON array, inserted in its order), PREPARED,
-- each with its creation event, in one statement: a group commit. A row
-- whose intent exists is skipped (ON CONFLICT) and not returned.
WITH i AS (
    SELECT r.v ->> 'tenant_id' AS tenant_id, (r.v ->> 'operation_id')::uuid AS operation_id,
           r.v ->> 'operation_type' AS operation_type, r.v ->> 'intent_ref' AS intent_ref, r.v ->> 'target' AS target,
           decode(r.v ->> 'payload', 'base64') AS payload, decode(r.v ->> 'payload_hash', 'base64') AS payload_hash,
           (r.v ->> 'remote_key')::uuid AS remote_key, (r.v ->> 'retry_window_end')::timestamptz AS retry_window_end,
           (r.v ->> 'retry_window_micros')::bigint AS retry_window_micros,
           (r.v ->> 'deadline')::timestamptz AS deadline, (r.v ->> 'created_at')::timestamptz AS created_at,
           r.v -> 'evidence' AS evidence, r.n
      FROM jsonb_array_elements(sqlc.arg(creations)::jsonb) WITH ORDINALITY AS r(v, n)
), ins AS (
    INSERT INTO operation_ledger (tenant_id, operation_id, operation_type, intent_ref, target,
        payload, payload_hash, remote_key, state, retry_window_end, retry_window_micros, deadline,
        created_at, updated_at)
    SELECT i.tenant_id, i.operation_id, i.operation_type, i.intent_ref, i.target, i.payload, i.payload_hash,
           i.remote_key, 'PREPARED', i.retry_window_end, i.retry_window_micros, i.deadline, i.created_at,
           i.created_at
      FROM i ORDER BY i.n
    ON CONFLICT (tenant_id, operation_type, intent_ref) DO NOTHING
    RETURNING *
), ev AS (
    INSERT INTO operation_events (tenant_id, operation_id, to_state, fence_token, actor, reason, evidence, at)
    SELECT ins.tenant_id, ins.operation_id, 'PREPARED', 0, 'client', 'created', i.evidence, ins.created_at
      FROM ins JOIN i ON i.operation_id = ins.operation_id
)
SELECT ins.tenant_id, ins.operation_id::text AS operation_id, ins.operation_type, ins.intent_ref, ins.target,
       ins.payload, ins.payload_hash, ins.remote_key::text AS remote_key, ins.state, ins.fence_token,
       ins.attempt_count, ins.lease_expires_at, ins.remote_ref, ins.retry_window_end, ins.deadline,
       ins.next_reconcile_at, ins.reason, ins.created_at, ins.updated_at, ins.last_sent_at,
       ins.first_claimed_at, ins.retry_window_micros
  FROM ins;
