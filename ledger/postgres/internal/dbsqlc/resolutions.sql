-- name: ResolutionInsert :one
INSERT INTO resolutions (tenant_id, operation_id, fence_token, to_state, remote_ref, reason,
    proposed_by, proposed_by_name, proposed_at, kind)
VALUES (@tenant_id, CAST(@operation_id::text AS uuid), @fence_token, @to_state, @remote_ref, @reason,
    @proposed_by, @proposed_by_name, @proposed_at, @kind)
RETURNING resolution_id, tenant_id, operation_id::text AS operation_id, fence_token, to_state, remote_ref, reason,
    proposed_by, proposed_by_name, proposed_at, decided_by, decided_by_name, decided_at, decision, decision_why, kind;

-- name: ResolutionLockOpen :one
-- Held against other deciders until the transaction ends.
SELECT resolution_id, tenant_id, operation_id::text AS operation_id, fence_token, to_state, remote_ref, reason,
    proposed_by, proposed_by_name, proposed_at, decided_by, decided_by_name, decided_at, decision, decision_why, kind
  FROM resolutions
 WHERE tenant_id = @tenant_id AND resolution_id = @resolution_id AND decided_at IS NULL
   FOR UPDATE;

-- name: ResolutionDecide :exec
UPDATE resolutions SET decided_by = @decided_by, decided_by_name = @decided_by_name, decided_at = @decided_at,
    decision = @decision, decision_why = @decision_why
 WHERE resolution_id = @resolution_id;

-- name: ResolutionList :many
SELECT resolution_id, tenant_id, operation_id::text AS operation_id, fence_token, to_state, remote_ref, reason,
    proposed_by, proposed_by_name, proposed_at, decided_by, decided_by_name, decided_at, decision, decision_why, kind
  FROM resolutions
 WHERE tenant_id = @tenant_id AND (NOT @open_only::boolean OR decided_at IS NULL)
 ORDER BY resolution_id DESC LIMIT 500;

-- name: ResolutionListOpen :many
SELECT resolution_id, tenant_id, operation_id::text AS operation_id, fence_token, to_state, remote_ref, reason,
    proposed_by, proposed_by_name, proposed_at, decided_by, decided_by_name, decided_at, decision, decision_why, kind
  FROM resolutions
 WHERE decided_at IS NULL AND (@all_tenants::boolean OR tenant_id = ANY(@tenants::text[]))
 ORDER BY resolution_id LIMIT 500;
