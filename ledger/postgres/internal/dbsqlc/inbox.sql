-- name: DeliveryInsert :one
-- No row when the target holds a delivery of the same body (a redelivery
-- is processed once).
INSERT INTO webhook_inbox (target, body_sha256, body, received_at, next_attempt_at)
VALUES (@target, @body_sha256, @body, @received_at, @received_at)
ON CONFLICT (target, body_sha256) DO NOTHING
RETURNING delivery_id;

-- name: DeliveryIDByBody :one
SELECT delivery_id FROM webhook_inbox WHERE target = @target AND body_sha256 = @body_sha256;

-- name: DeliveryClaim :many
-- The due deliveries oldest due first (webhook_inbox_due), each locked
-- and skipped by a concurrent claim.
WITH picked AS (
    SELECT delivery_id FROM webhook_inbox
    WHERE processed_at IS NULL AND next_attempt_at <= @now::timestamptz
    ORDER BY next_attempt_at LIMIT @max_rows FOR UPDATE SKIP LOCKED
)
UPDATE webhook_inbox w SET attempts = w.attempts + 1, failed_attempts = w.failed_attempts + 1,
    next_attempt_at = @lease_until::timestamptz
FROM picked p WHERE w.delivery_id = p.delivery_id
RETURNING w.delivery_id, w.target, w.body, w.received_at, w.attempts, w.outcome, w.failed_attempts,
    w.last_error;

-- name: DeliveryFinish :exec
UPDATE webhook_inbox SET processed_at = @processed_at::timestamptz, next_attempt_at = NULL,
    body = NULL, outcome = @outcome WHERE delivery_id = @delivery_id;

-- name: DeliveryDefer :exec
UPDATE webhook_inbox SET next_attempt_at = @due_at::timestamptz, outcome = @outcome,
    failed_attempts = greatest(failed_attempts - 1, 0)
WHERE delivery_id = @delivery_id AND processed_at IS NULL;

-- name: DeliveryFail :exec
UPDATE webhook_inbox SET next_attempt_at = @due_at::timestamptz, last_error = @last_error,
    outcome = @outcome
WHERE delivery_id = @delivery_id AND processed_at IS NULL;

-- name: QuarantineInsert :one
INSERT INTO quarantine (target, delivery_id, reason, event_id,
    claimed_reference, claimed_tenant, remote_id, operation_id, operation_tenant, quarantined_at,
    scope_tenant)
VALUES (@target, @delivery_id::bigint, @reason, @event_id, @claimed_reference, @claimed_tenant, @remote_id,
    @operation_id, @operation_tenant, @quarantined_at, @scope_tenant)
RETURNING quarantine_id;

-- name: QuarantineDismiss :one
UPDATE quarantine SET resolved_at = @resolved_at::timestamptz, resolved_by = @resolved_by,
    resolved_by_name = @resolved_by_name, resolution = @resolution, resolved_by_role = @resolved_by_role,
    resolution_kind = 'dismissed'
WHERE scope_tenant = @scope_tenant AND quarantine_id = @quarantine_id AND resolved_at IS NULL
RETURNING operation_id;

-- name: OperationLeaseUnknown :many
-- An UNKNOWN operation no lease holds, under a new fence.
UPDATE operation_ledger SET fence_token = fence_token + 1,
    lease_expires_at = @lease_until::timestamptz, next_reconcile_at = @lease_until::timestamptz,
    updated_at = @now::timestamptz
WHERE tenant_id = @tenant_id AND operation_id = (@operation_id::text)::uuid AND state = 'UNKNOWN'
    AND (lease_expires_at IS NULL OR lease_expires_at <= @now::timestamptz)
RETURNING tenant_id, operation_id::text AS operation_id, operation_type, intent_ref, target, payload, payload_hash,
    remote_key::text AS remote_key, state, fence_token, attempt_count, lease_expires_at,
    remote_ref, retry_window_end, deadline, next_reconcile_at, reason,
    created_at, updated_at, last_sent_at, first_claimed_at, retry_window_micros;
