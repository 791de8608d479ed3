-- name: DeliveryInsert :one
-- See the PostgreSQL queries. Times are INTEGER microseconds.
INSERT INTO webhook_inbox (target, body_sha256, body, received_at, next_attempt_at)
VALUES (@target, @body_sha256, @body, CAST(sqlc.arg(received_at) AS INTEGER), CAST(sqlc.arg(received_at) AS INTEGER))
ON CONFLICT (target, body_sha256) DO NOTHING
RETURNING delivery_id;

-- name: DeliveryIDByBody :one
SELECT delivery_id FROM webhook_inbox WHERE target = @target AND body_sha256 = @body_sha256;

-- name: DeliveryClaim :many
-- SQLite has one writer: no claim runs beside this one.
UPDATE webhook_inbox SET attempts = attempts + 1,
    failed_attempts = failed_attempts + 1, next_attempt_at = CAST(sqlc.arg(lease_until) AS INTEGER)
WHERE delivery_id IN (SELECT delivery_id FROM webhook_inbox
    WHERE processed_at IS NULL AND next_attempt_at <= CAST(sqlc.arg(now) AS INTEGER)
    ORDER BY next_attempt_at LIMIT CAST(sqlc.arg(max_rows) AS INTEGER))
RETURNING delivery_id, target, body, received_at, attempts, outcome, failed_attempts, last_error;

-- name: DeliveryFinish :exec
UPDATE webhook_inbox SET processed_at = CAST(sqlc.arg(processed_at) AS INTEGER), next_attempt_at = NULL,
    body = NULL, outcome = @outcome WHERE delivery_id = @delivery_id;

-- name: DeliveryDefer :exec
UPDATE webhook_inbox SET next_attempt_at = CAST(sqlc.arg(due_at) AS INTEGER), outcome = @outcome,
    failed_attempts = max(failed_attempts - 1, 0)
WHERE delivery_id = @delivery_id AND processed_at IS NULL;

-- name: DeliveryFail :exec
UPDATE webhook_inbox SET next_attempt_at = CAST(sqlc.arg(due_at) AS INTEGER), last_error = @last_error,
    outcome = @outcome
WHERE delivery_id = @delivery_id AND processed_at IS NULL;

-- name: QuarantineInsert :one
INSERT INTO quarantine (target, delivery_id, reason, event_id,
    claimed_reference, claimed_tenant, remote_id, operation_id, operation_tenant, quarantined_at,
    scope_tenant)
VALUES (@target, CAST(sqlc.arg(delivery_id) AS INTEGER), @reason, @event_id, @claimed_reference, @claimed_tenant,
    @remote_id, @operation_id, @operation_tenant, CAST(sqlc.arg(quarantined_at) AS INTEGER), @scope_tenant)
RETURNING quarantine_id;

-- name: QuarantineDismiss :one
UPDATE quarantine SET resolved_at = CAST(sqlc.arg(resolved_at) AS INTEGER), resolved_by = @resolved_by,
    resolved_by_name = @resolved_by_name, resolution = @resolution, resolved_by_role = @resolved_by_role,
    resolution_kind = 'dismissed'
WHERE scope_tenant = @scope_tenant AND quarantine_id = CAST(sqlc.arg(quarantine_id) AS INTEGER)
    AND resolved_at IS NULL
RETURNING operation_id;

-- name: OperationLeaseUnknown :many
UPDATE operation_ledger SET fence_token = fence_token + 1,
    lease_expires_at = CAST(sqlc.arg(lease_until) AS INTEGER), next_reconcile_at = CAST(sqlc.arg(lease_until) AS INTEGER),
    updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE tenant_id = @tenant_id AND operation_id = @operation_id AND state = 'UNKNOWN'
    AND (lease_expires_at IS NULL OR lease_expires_at <= CAST(sqlc.arg(now) AS INTEGER))
RETURNING tenant_id, operation_id, operation_type, intent_ref, target, payload, payload_hash, remote_key, state,
    fence_token, attempt_count, lease_expires_at, remote_ref,
    retry_window_end, deadline, next_reconcile_at, reason, created_at, updated_at, last_sent_at,
    first_claimed_at, retry_window_micros;
