-- name: QuarantineItemGet :one
-- See the PostgreSQL queries. Times are INTEGER microseconds.
SELECT quarantine_id, target, CAST(coalesce(delivery_id, 0) AS INTEGER) AS delivery_id, reason, event_id,
    claimed_reference, claimed_tenant, remote_id, operation_id, operation_tenant, quarantined_at,
    resolved_at, resolved_by, resolved_by_name, resolved_by_role, resolution_kind, resolution
FROM quarantine WHERE quarantine_id = CAST(sqlc.arg(quarantine_id) AS INTEGER) AND scope_tenant = @scope_tenant;

-- name: OperationHold :one
-- SQLite has one writer: inside the write transaction the operation
-- cannot change under the caller.
SELECT CAST(1 AS BOOLEAN) FROM operation_ledger WHERE tenant_id = @tenant_id AND operation_id = @operation_id;

-- name: QuarantineLink :execrows
UPDATE quarantine SET operation_id = @operation_id, operation_tenant = @scope_tenant,
    resolved_at = CAST(sqlc.arg(resolved_at) AS INTEGER), resolved_by = @resolved_by,
    resolved_by_name = @resolved_by_name, resolution = @resolution, resolved_by_role = @resolved_by_role,
    resolution_kind = 'linked'
WHERE scope_tenant = @scope_tenant AND quarantine_id = CAST(sqlc.arg(quarantine_id) AS INTEGER)
    AND resolved_at IS NULL;

-- name: OperationDue :exec
UPDATE operation_ledger SET next_reconcile_at = CAST(sqlc.arg(due_at) AS INTEGER)
WHERE tenant_id = @tenant_id AND operation_id = @operation_id AND state = 'UNKNOWN'
    AND (lease_expires_at IS NULL OR lease_expires_at <= CAST(sqlc.arg(due_at) AS INTEGER))
    AND (next_reconcile_at IS NULL OR next_reconcile_at > CAST(sqlc.arg(due_at) AS INTEGER));
