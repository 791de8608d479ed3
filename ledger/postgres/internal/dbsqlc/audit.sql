-- name: FindingInsert :one
-- The finding with the operation's own target, in one statement that also
-- says whether the operation exists, so that "no such operation" and
-- "already open" are told apart without a transaction.
WITH op AS (
    SELECT o.tenant_id, o.operation_id, o.target FROM operation_ledger o
    WHERE o.tenant_id = @tenant_id AND o.operation_id = (@operation_id::text)::uuid
), ins AS (
    INSERT INTO audit_findings (tenant_id, operation_id, target, kind, remote_ids, evidence, found_at, escalated)
    SELECT op.tenant_id, op.operation_id, op.target, @kind::text, @remote_ids::text, (@evidence::text)::jsonb,
        @found_at::timestamptz, @escalated::boolean FROM op
    ON CONFLICT (tenant_id, operation_id, kind) WHERE resolved_at IS NULL DO NOTHING
    RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM op) AS found, EXISTS (SELECT 1 FROM ins) AS created;

-- name: FindingsSince :many
SELECT finding_id, tenant_id, operation_id::text AS operation_id, target, kind, remote_ids,
    evidence::text AS evidence, found_at, escalated, resolved_at, acknowledged_at, acknowledged_by,
    acknowledged_by_name, acknowledgement
FROM audit_findings WHERE tenant_id = @tenant_id AND found_at >= @since
ORDER BY found_at DESC, finding_id DESC LIMIT @max_rows;

-- name: FindingCount :one
SELECT count(*) FROM audit_findings
WHERE tenant_id = @tenant_id AND found_at >= @since::timestamptz AND found_at < @until::timestamptz
    AND (@kind::text = '' OR kind = @kind::text);

-- name: AuditCursorGet :one
-- A start-over position is NULLs ('' for the id here).
SELECT last_created_at, coalesce(last_operation_id::text, '')::text AS last_operation_id FROM audit_cursor WHERE target = @target;

-- name: AuditCursorSave :exec
INSERT INTO audit_cursor (target, last_created_at, last_operation_id, updated_at)
VALUES (@target, sqlc.narg(last_created_at)::timestamptz, (sqlc.narg(last_operation_id)::text)::uuid, @updated_at)
ON CONFLICT (target) DO UPDATE SET last_created_at = excluded.last_created_at,
    last_operation_id = excluded.last_operation_id, updated_at = excluded.updated_at;

-- name: AuditFinalBatch :many
-- The final operations of one target after a position, in creation order
-- (the partial index operation_ledger_audit, whose predicate the state
-- list repeats).
SELECT tenant_id, operation_id::text AS operation_id, operation_type, intent_ref, target, payload, payload_hash,
    remote_key::text AS remote_key, state, fence_token, attempt_count, lease_expires_at,
    remote_ref, retry_window_end, deadline, next_reconcile_at, reason,
    created_at, updated_at, last_sent_at, first_claimed_at, retry_window_micros
FROM operation_ledger
WHERE target = @target AND state IN ('SUCCEEDED', 'FAILED_TERMINAL')
    AND (sqlc.narg(after_created_at)::timestamptz IS NULL
        OR (created_at, operation_id) > (sqlc.narg(after_created_at)::timestamptz, nullif(@after_id::text, '')::uuid))
ORDER BY created_at, operation_id
LIMIT @max_rows;
