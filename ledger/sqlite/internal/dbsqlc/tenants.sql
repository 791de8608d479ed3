-- name: TenantInsert :execrows
-- Zero rows when the tenant exists already.
INSERT INTO tenants (tenant_id, created_at) VALUES (@tenant_id, @created_at)
ON CONFLICT (tenant_id) DO NOTHING;

-- name: TenantList :many
-- Every tenant's by design: the administrators' list to pick from.
SELECT tenant_id, created_at FROM tenants ORDER BY tenant_id;

-- name: TenantKnown :one
SELECT EXISTS (SELECT 1 FROM tenants WHERE tenant_id = @tenant_id);

-- name: TenantKnownHeld :one
-- SQLite has one writer: the transaction itself holds the tenant against
-- an erasure until it commits.
SELECT EXISTS (SELECT 1 FROM tenants WHERE tenant_id = @tenant_id);

-- name: TokenInsert :exec
INSERT INTO api_tokens (token_id, tenant_id, name, token_hash, created_at, rate_per_second, rate_burst)
VALUES (@token_id, @tenant_id, @name, @token_hash, @created_at, sqlc.narg(rate_per_second), sqlc.narg(rate_burst));

-- name: TokenByHash :one
SELECT token_id, tenant_id, name, token_hash, created_at, revoked_at, last_used_at, rate_per_second, rate_burst
  FROM api_tokens WHERE token_hash = @token_hash;

-- name: TokenList :many
SELECT token_id, tenant_id, name, token_hash, created_at, revoked_at, last_used_at, rate_per_second, rate_burst
  FROM api_tokens WHERE tenant_id = @tenant_id ORDER BY created_at DESC, token_id;

-- name: TokenRevoke :execrows
-- A revoked token keeps its first revocation time.
UPDATE api_tokens SET revoked_at = coalesce(revoked_at, CAST(sqlc.arg(revoked_at) AS INTEGER))
 WHERE tenant_id = @tenant_id AND token_id = @token_id;

-- name: TokenTouch :execrows
-- Written at most once per @stale_before window per token.
UPDATE api_tokens SET last_used_at = CAST(sqlc.arg(last_used_at) AS INTEGER)
 WHERE tenant_id = @tenant_id AND token_id = @token_id
   AND (last_used_at IS NULL OR last_used_at <= CAST(sqlc.arg(stale_before) AS INTEGER));

-- name: ActionInsert :exec
INSERT INTO actions (tenant_id, at, subject, actor_name, role, kind, object, operation_id, reason, request_id)
VALUES (@tenant_id, @at, @subject, @actor_name, @role, @kind, @object, @operation_id, @reason, @request_id);

-- name: ActionList :many
-- The tenant's actions, newest first, of one operation when @operation_id
-- is not empty.
SELECT action_id, tenant_id, at, subject, actor_name, role, kind, object, operation_id, reason, request_id
  FROM actions
 WHERE tenant_id = @tenant_id AND (CAST(sqlc.arg(operation_id) AS TEXT) = '' OR operation_id = CAST(sqlc.arg(operation_id) AS TEXT))
 ORDER BY action_id DESC LIMIT sqlc.arg(max_rows);
