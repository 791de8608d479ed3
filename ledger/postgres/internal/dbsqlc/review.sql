-- name: QuarantineItemGet :one
SELECT quarantine_id, target, coalesce(delivery_id, 0)::bigint AS delivery_id, reason, event_id,
    claimed_reference, claimed_tenant, remote_id, operation_id, operation_tenant, quarantined_at,
    resolved_at, resolved_by, resolved_by_name, resolved_by_role, resolution_kind, resolution
FROM quarantine WHERE quarantine_id = @quarantine_id AND scope_tenant = @scope_tenant;

-- name: OperationHold :one
-- FOR SHARE: the operation cannot vanish or change tenant before the
-- transaction ends.
SELECT true FROM operation_ledger WHERE tenant_id = @tenant_id AND operation_id = (@operation_id::text)::uuid
FOR SHARE;

-- name: QuarantineLink :execrows
UPDATE quarantine SET operation_id = @operation_id, operation_tenant = @scope_tenant,
    resolved_at = @resolved_at::timestamptz, resolved_by = @resolved_by, resolved_by_name = @resolved_by_name,
    resolution = @resolution, resolved_by_role = @resolved_by_role, resolution_kind = 'linked'
WHERE scope_tenant = @scope_tenant AND quarantine_id = @quarantine_id AND resolved_at IS NULL;

-- name: OperationDue :exec
-- An UNKNOWN operation no reconciler holds, unless it is due sooner.
UPDATE operation_ledger SET next_reconcile_at = @due_at::timestamptz
WHERE tenant_id = @tenant_id AND operation_id = (@operation_id::text)::uuid AND state = 'UNKNOWN'
    AND (lease_expires_at IS NULL OR lease_expires_at <= @due_at::timestamptz)
    AND (next_reconcile_at IS NULL OR next_reconcile_at > @due_at::timestamptz);
