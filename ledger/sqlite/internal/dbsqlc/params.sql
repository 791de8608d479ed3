-- name: TenantParamList :many
SELECT name, value, updated_at FROM tenant_params WHERE tenant_id = @tenant_id ORDER BY name;

-- name: TenantParamPut :exec
INSERT INTO tenant_params (tenant_id, name, value, updated_at) VALUES (@tenant_id, @name, @value, @updated_at)
ON CONFLICT (tenant_id, name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at;

-- name: TenantParamDelete :exec
DELETE FROM tenant_params WHERE tenant_id = @tenant_id AND name = @name;

-- name: OperationCountInStates :one
-- states is a JSON array of state names (sqlc.slice numbers the arguments
-- after it wrongly).
SELECT count(*) FROM (SELECT 1 FROM operation_ledger
 WHERE tenant_id = @tenant_id AND state IN (SELECT value FROM json_each(@states))
 LIMIT CAST(sqlc.arg(max_count) AS INTEGER));
