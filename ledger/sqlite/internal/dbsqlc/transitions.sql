-- name: OperationClaim :one
-- The first claim starts the same-key replay window; nothing returns to
-- PREPARED, so every claim is the first, but the window is never moved by
-- a later one.
UPDATE operation_ledger SET state = 'IN_FLIGHT', fence_token = fence_token + 1,
    attempt_count = attempt_count + 1, lease_expires_at = CAST(sqlc.arg(lease_end) AS INTEGER),
    updated_at = CAST(sqlc.arg(now) AS INTEGER), reason = '', last_sent_at = CAST(sqlc.arg(now) AS INTEGER),
    first_claimed_at = coalesce(first_claimed_at, CAST(sqlc.arg(now) AS INTEGER)),
    retry_window_end = CASE WHEN first_claimed_at IS NULL THEN CAST(sqlc.arg(now) AS INTEGER) + retry_window_micros
        ELSE retry_window_end END
WHERE tenant_id = @tenant_id AND operation_id = @operation_id AND state = 'PREPARED' AND payload_hash = @payload_hash
RETURNING tenant_id, operation_id, operation_type, intent_ref, target, payload, payload_hash,
       remote_key, state, fence_token, attempt_count, lease_expires_at, remote_ref,
       retry_window_end, deadline, next_reconcile_at, reason, created_at, updated_at, last_sent_at,
       first_claimed_at, retry_window_micros;

-- name: OperationClaimPick :many
-- The executor's next batch, picked fairly across tenants: walks the
-- tenants with PREPARED work through operation_ledger_prepared_tenant,
-- bounds each one's candidates at its @max-th oldest (SQLite has no
-- LATERAL), ranks them within their tenant and takes them rank by rank,
-- oldest first within a rank. The single writer's transaction holds
-- them for OperationClaimPicked.
WITH RECURSIVE tenants AS (
    SELECT (SELECT t0.tenant_id FROM operation_ledger t0 WHERE t0.state = 'PREPARED' ORDER BY t0.tenant_id LIMIT 1) AS id
    UNION ALL
    SELECT (SELECT t1.tenant_id FROM operation_ledger t1 WHERE t1.state = 'PREPARED' AND t1.tenant_id > t.id
             ORDER BY t1.tenant_id LIMIT 1)
      FROM tenants t WHERE t.id IS NOT NULL
), bound AS (
    SELECT t.id, coalesce((SELECT b0.created_at FROM operation_ledger b0 INDEXED BY operation_ledger_prepared_tenant
            WHERE b0.tenant_id = t.id AND b0.state = 'PREPARED'
            ORDER BY b0.created_at LIMIT 1 OFFSET CAST(sqlc.arg(max) AS INTEGER) - 1),
           9223372036854775807) AS upto
      FROM tenants t WHERE t.id IS NOT NULL
), ranked AS (
    SELECT o.tenant_id, o.operation_id, o.created_at,
           row_number() OVER (PARTITION BY o.tenant_id ORDER BY o.created_at, o.operation_id) AS tenant_rank
      FROM bound b CROSS JOIN operation_ledger o INDEXED BY operation_ledger_prepared_tenant
     WHERE o.tenant_id = b.id AND o.state = 'PREPARED' AND o.created_at <= b.upto
)
SELECT ranked.tenant_id, ranked.operation_id FROM ranked ORDER BY ranked.tenant_rank, ranked.created_at
 LIMIT CAST(sqlc.arg(max) AS INTEGER);

-- name: OperationClaimPicked :many
-- Claims as OperationClaim the operations picked (a JSON array of
-- [tenant, id] pairs) that are still PREPARED; each row's lease is its
-- target's in the JSON object @target_leases (target to microseconds), or
-- @default_lease.
UPDATE operation_ledger SET state = 'IN_FLIGHT', fence_token = fence_token + 1,
    attempt_count = attempt_count + 1,
    lease_expires_at = CAST(sqlc.arg(now) AS INTEGER) + coalesce(
        (SELECT l.value FROM json_each(sqlc.arg(target_leases)) l WHERE l.key = operation_ledger.target),
        CAST(sqlc.arg(default_lease) AS INTEGER)),
    updated_at = CAST(sqlc.arg(now) AS INTEGER), reason = '', last_sent_at = CAST(sqlc.arg(now) AS INTEGER),
    first_claimed_at = coalesce(first_claimed_at, CAST(sqlc.arg(now) AS INTEGER)),
    retry_window_end = CASE WHEN first_claimed_at IS NULL THEN CAST(sqlc.arg(now) AS INTEGER) + retry_window_micros
        ELSE retry_window_end END
WHERE (tenant_id, operation_id) IN (
       SELECT json_extract(p.value, '$[0]'), json_extract(p.value, '$[1]') FROM json_each(sqlc.arg(picked)) p)
  AND state = 'PREPARED'
RETURNING tenant_id, operation_id, operation_type, intent_ref, target, payload, payload_hash,
       remote_key, state, fence_token, attempt_count, lease_expires_at, remote_ref,
       retry_window_end, deadline, next_reconcile_at, reason, created_at, updated_at, last_sent_at,
       first_claimed_at, retry_window_micros;

-- name: OperationRecordOne :many
-- One outcome, applied only if the operation is still in @from_state at
-- @fence: no row otherwise.
UPDATE operation_ledger SET state = @to_state,
    remote_ref = coalesce(nullif(CAST(sqlc.arg(remote_ref) AS TEXT), ''), remote_ref), lease_expires_at = NULL,
    next_reconcile_at = sqlc.narg(next_at), reason = @reason, updated_at = CAST(sqlc.arg(now) AS INTEGER),
    last_sent_at = coalesce(sqlc.narg(sent_at), last_sent_at),
    retry_window_end = CASE WHEN CAST(sqlc.arg(end_replay) AS INTEGER) THEN min(retry_window_end, CAST(sqlc.arg(now) AS INTEGER))
        ELSE retry_window_end END
WHERE tenant_id = @tenant_id AND operation_id = @operation_id AND state = @from_state AND fence_token = @fence
RETURNING tenant_id, operation_id, operation_type, intent_ref, target, payload, payload_hash,
       remote_key, state, fence_token, attempt_count, lease_expires_at, remote_ref,
       retry_window_end, deadline, next_reconcile_at, reason, created_at, updated_at, last_sent_at,
       first_claimed_at, retry_window_micros;

-- name: OperationSweepExpired :many
-- At most @max IN_FLIGHT operations whose lease ended by @now, to UNKNOWN,
-- due at once.
UPDATE operation_ledger SET state = 'UNKNOWN', lease_expires_at = NULL,
    next_reconcile_at = CAST(sqlc.arg(now) AS INTEGER), reason = @reason, updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE (tenant_id, operation_id) IN (
    SELECT p.tenant_id, p.operation_id FROM operation_ledger p
     WHERE p.state = 'IN_FLIGHT' AND p.lease_expires_at <= CAST(sqlc.arg(now) AS INTEGER)
     LIMIT CAST(sqlc.arg(max) AS INTEGER))
RETURNING tenant_id, operation_id, operation_type, intent_ref, target, payload, payload_hash,
       remote_key, state, fence_token, attempt_count, lease_expires_at, remote_ref,
       retry_window_end, deadline, next_reconcile_at, reason, created_at, updated_at, last_sent_at,
       first_claimed_at, retry_window_micros;

-- name: EventsInsert :exec
-- The events of a transaction's transitions, given as a JSON array of
-- objects (see the driver's eventRow).
INSERT INTO operation_events (tenant_id, operation_id, from_state, to_state, fence_token, actor, reason, evidence, at)
SELECT json_extract(e.value, '$.tenant_id'), json_extract(e.value, '$.operation_id'),
       json_extract(e.value, '$.from_state'), json_extract(e.value, '$.to_state'),
       json_extract(e.value, '$.fence_token'), json_extract(e.value, '$.actor'), json_extract(e.value, '$.reason'),
       json_extract(e.value, '$.evidence'), json_extract(e.value, '$.at')
  FROM json_each(sqlc.arg(events)) e;

-- name: CallbacksQueue :exec
-- The tenant's callback of each event reaching a state in
-- @callback_states, when the tenant has an endpoint; one per state reached.
INSERT INTO callback_outbox (tenant_id, operation_id, state, fence_token, created_at, next_attempt_at)
SELECT json_extract(e.value, '$.tenant_id'), json_extract(e.value, '$.operation_id'),
       json_extract(e.value, '$.to_state'), json_extract(e.value, '$.fence_token'),
       json_extract(e.value, '$.at'), json_extract(e.value, '$.at')
  FROM json_each(sqlc.arg(events)) e JOIN tenant_callbacks tc ON tc.tenant_id = json_extract(e.value, '$.tenant_id')
 WHERE json_extract(e.value, '$.to_state') IN (SELECT s.value FROM json_each(sqlc.arg(callback_states)) s)
ON CONFLICT (tenant_id, operation_id, state) DO NOTHING;

-- name: EscalationNoticesQueue :exec
-- The owning team's notice of each event reaching ESCALATED.
INSERT INTO escalation_outbox (tenant_id, operation_id, fence_token, created_at, next_attempt_at)
SELECT json_extract(e.value, '$.tenant_id'), json_extract(e.value, '$.operation_id'),
       json_extract(e.value, '$.fence_token'), json_extract(e.value, '$.at'), json_extract(e.value, '$.at')
  FROM json_each(sqlc.arg(events)) e
 WHERE json_extract(e.value, '$.to_state') = 'ESCALATED'
ON CONFLICT (tenant_id, operation_id, fence_token) DO NOTHING;

-- name: OperationDuePick :many
-- The reconciler's next lease, picked: walks the tenants with UNKNOWN work
-- through operation_ledger_unknown_tenant, bounds each one's candidates
-- at its @max-th due time (SQLite has no LATERAL), and ranks only those.
-- The skipped targets (a JSON list) are left out of the bound as well as
-- of the candidates, so that their backlog does not use up a tenant's
-- share. The single writer's transaction holds them for OperationLease.
WITH RECURSIVE tenants AS (
    SELECT (SELECT t0.tenant_id FROM operation_ledger t0 WHERE t0.state = 'UNKNOWN' ORDER BY t0.tenant_id LIMIT 1) AS id
    UNION ALL
    SELECT (SELECT t1.tenant_id FROM operation_ledger t1 WHERE t1.state = 'UNKNOWN' AND t1.tenant_id > t.id
             ORDER BY t1.tenant_id LIMIT 1)
      FROM tenants t WHERE t.id IS NOT NULL
), bound AS (
    SELECT t.id, coalesce((SELECT b0.next_reconcile_at FROM operation_ledger b0
            WHERE b0.tenant_id = t.id AND b0.state = 'UNKNOWN' AND b0.next_reconcile_at <= CAST(sqlc.arg(now) AS INTEGER)
              AND b0.target NOT IN (SELECT s0.value FROM json_each(sqlc.arg(skip_targets)) s0)
            ORDER BY b0.next_reconcile_at LIMIT 1 OFFSET CAST(sqlc.arg(max) AS INTEGER) - 1),
           CAST(sqlc.arg(now) AS INTEGER)) AS upto
      FROM tenants t WHERE t.id IS NOT NULL
), due AS (
    SELECT o.tenant_id, o.operation_id, o.next_reconcile_at,
           row_number() OVER (PARTITION BY o.tenant_id ORDER BY o.next_reconcile_at, o.operation_id) AS tenant_rank
      FROM bound b CROSS JOIN operation_ledger o INDEXED BY operation_ledger_unknown_tenant
     WHERE o.tenant_id = b.id AND o.state = 'UNKNOWN' AND o.next_reconcile_at <= b.upto
       AND o.target NOT IN (SELECT s1.value FROM json_each(sqlc.arg(skip_targets)) s1)
)
SELECT due.tenant_id, due.operation_id FROM due ORDER BY due.tenant_rank, due.next_reconcile_at
 LIMIT CAST(sqlc.arg(max) AS INTEGER);

-- name: OperationLease :many
-- Leases the operations picked (a JSON array of [tenant, id] pairs) that
-- are still UNKNOWN and due.
UPDATE operation_ledger SET fence_token = fence_token + 1, lease_expires_at = CAST(sqlc.arg(lease_end) AS INTEGER),
       next_reconcile_at = CAST(sqlc.arg(lease_end) AS INTEGER), updated_at = CAST(sqlc.arg(now) AS INTEGER)
 WHERE (tenant_id, operation_id) IN (
       SELECT json_extract(p.value, '$[0]'), json_extract(p.value, '$[1]') FROM json_each(sqlc.arg(picked)) p)
   AND state = 'UNKNOWN' AND next_reconcile_at <= CAST(sqlc.arg(now) AS INTEGER)
RETURNING tenant_id, operation_id, operation_type, intent_ref, target, payload, payload_hash,
       remote_key, state, fence_token, attempt_count, lease_expires_at, remote_ref,
       retry_window_end, deadline, next_reconcile_at, reason, created_at, updated_at, last_sent_at,
       first_claimed_at, retry_window_micros;
