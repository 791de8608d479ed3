-- name: TenantParamList :many
SELECT name, value, updated_at FROM tenant_params WHERE tenant_id = @tenant_id ORDER BY name;

-- name: TenantParamLock :exec
-- A transaction-scoped advisory lock on the tenant's parameters. Its two
-- keys are 0x5e771e (this lock's space, apart from the one-key locks that
-- migrations take) and the tenant's hash.
SELECT pg_advisory_xact_lock(6190878, hashtext(@tenant_id::text));

-- name: TenantParamPut :exec
INSERT INTO tenant_params (tenant_id, name, value, updated_at) VALUES (@tenant_id, @name, @value, @updated_at)
ON CONFLICT (tenant_id, name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at;

-- name: TenantParamDelete :exec
DELETE FROM tenant_params WHERE tenant_id = @tenant_id AND name = @name;

-- name: OperationCountInStates :one
SELECT count(*) FROM (SELECT 1 FROM operation_ledger
 WHERE tenant_id = @tenant_id AND state = ANY(@states::text[]) LIMIT @max_count) o;
