-- name: OperationTarget :one
-- See the PostgreSQL queries: SQLite reads the operation and inserts its
-- finding in one write transaction. Times are INTEGER microseconds.
SELECT target FROM operation_ledger WHERE tenant_id = @tenant_id AND operation_id = @operation_id;

-- name: FindingInsert :execrows
-- No row when an open finding of the kind exists for the operation.
INSERT INTO audit_findings (tenant_id, operation_id, target, kind, remote_ids, evidence, found_at, escalated)
VALUES (@tenant_id, @operation_id, @target, @kind, @remote_ids, @evidence, CAST(sqlc.arg(found_at) AS INTEGER),
    CAST(sqlc.arg(escalated) AS BOOLEAN))
ON CONFLICT (tenant_id, operation_id, kind) WHERE resolved_at IS NULL DO NOTHING;

-- name: FindingsSince :many
SELECT finding_id, tenant_id, operation_id, target, kind, remote_ids, evidence, found_at,
    escalated, resolved_at, acknowledged_at, acknowledged_by, acknowledged_by_name, acknowledgement
FROM audit_findings WHERE tenant_id = @tenant_id AND found_at >= CAST(sqlc.arg(since) AS INTEGER)
ORDER BY found_at DESC, finding_id DESC LIMIT @max_rows;

-- name: FindingCount :one
SELECT count(*) FROM audit_findings
WHERE tenant_id = @tenant_id AND found_at >= CAST(sqlc.arg(since) AS INTEGER)
    AND found_at < CAST(sqlc.arg(until) AS INTEGER) AND (CAST(@kind AS TEXT) = '' OR kind = CAST(@kind AS TEXT));

-- name: AuditCursorGet :one
SELECT last_created_at, last_operation_id FROM audit_cursor WHERE target = @target;

-- name: AuditCursorSave :exec
INSERT INTO audit_cursor (target, last_created_at, last_operation_id, updated_at)
VALUES (@target, sqlc.narg(last_created_at), sqlc.narg(last_operation_id), CAST(sqlc.arg(updated_at) AS INTEGER))
ON CONFLICT (target) DO UPDATE SET last_created_at = excluded.last_created_at,
    last_operation_id = excluded.last_operation_id, updated_at = excluded.updated_at;

-- name: AuditFinalBatch :many
SELECT tenant_id, operation_id, operation_type, intent_ref, target, payload, payload_hash, remote_key, state,
    fence_token, attempt_count, lease_expires_at, remote_ref,
    retry_window_end, deadline, next_reconcile_at, reason, created_at, updated_at, last_sent_at,
    first_claimed_at, retry_window_micros
FROM operation_ledger
WHERE target = @target AND state IN ('SUCCEEDED', 'FAILED_TERMINAL')
    AND (sqlc.narg(after_created_at) IS NULL
        OR (created_at, operation_id) > (sqlc.narg(after_created_at), CAST(@after_id AS TEXT)))
ORDER BY created_at, operation_id
LIMIT @max_rows;
