-- name: FindingList :many
-- The findings' review list, newest first by id, within the reviewer's
-- tenants. Every narrowing is optional: '' or 0 or NULL is any. A search
-- by reference is FindingSearch.
SELECT finding_id, tenant_id, operation_id::text AS operation_id, target, kind, remote_ids,
    evidence::text AS evidence, found_at, escalated, resolved_at, acknowledged_at, acknowledged_by,
    acknowledged_by_name, acknowledgement
FROM audit_findings
WHERE (@all_tenants::boolean OR tenant_id = ANY(@tenants::text[]))
    AND (@operation_id::text = '' OR operation_id = nullif(@operation_id::text, '')::uuid)
    AND (NOT @open_only::boolean OR (acknowledged_at IS NULL AND resolved_at IS NULL))
    AND (NOT @resolved_only::boolean OR acknowledged_at IS NOT NULL OR resolved_at IS NOT NULL)
    AND (@target::text = '' OR target = @target::text)
    AND (@kind::text = '' OR kind = @kind::text)
    AND (sqlc.narg(before)::timestamptz IS NULL OR found_at < sqlc.narg(before)::timestamptz)
    AND (@after_id::bigint = 0 OR finding_id < @after_id::bigint)
ORDER BY finding_id DESC
LIMIT @max_rows;

-- name: FindingSearch :many
-- FindingList for a pasted reference, driven by the findings that name it
-- (migration 00038): those of an operation settle has seen the object
-- under (operation_objects, which holds a finding's own ids) and those
-- whose operation id starts with the reference (a whole id among them).
-- An OR of these in the list's WHERE walked every open finding newest
-- first, testing each (67 ms at 100,000).
WITH hits AS (
    SELECT f.finding_id FROM operation_objects o
        JOIN audit_findings f ON f.tenant_id = o.tenant_id AND f.operation_id = o.operation_id
        WHERE o.object_id = @ref::text
    UNION ALL SELECT a.finding_id FROM audit_findings a
        WHERE @op_prefix::text <> '' AND a.operation_id::text LIKE @op_prefix::text || '%'
)
SELECT finding_id, tenant_id, operation_id::text AS operation_id, target, kind, remote_ids,
    evidence::text AS evidence, found_at, escalated, resolved_at, acknowledged_at, acknowledged_by,
    acknowledged_by_name, acknowledgement
FROM audit_findings
WHERE finding_id IN (SELECT finding_id FROM hits)
    AND (@all_tenants::boolean OR tenant_id = ANY(@tenants::text[]))
    AND (@operation_id::text = '' OR operation_id = nullif(@operation_id::text, '')::uuid)
    AND (NOT @open_only::boolean OR (acknowledged_at IS NULL AND resolved_at IS NULL))
    AND (NOT @resolved_only::boolean OR acknowledged_at IS NOT NULL OR resolved_at IS NOT NULL)
    AND (@target::text = '' OR target = @target::text)
    AND (@kind::text = '' OR kind = @kind::text)
    AND (sqlc.narg(before)::timestamptz IS NULL OR found_at < sqlc.narg(before)::timestamptz)
    AND (@after_id::bigint = 0 OR finding_id < @after_id::bigint)
ORDER BY finding_id DESC
LIMIT @max_rows;

-- name: FindingGet :one
SELECT finding_id, tenant_id, operation_id::text AS operation_id, target, kind, remote_ids,
    evidence::text AS evidence, found_at, escalated, resolved_at, acknowledged_at, acknowledged_by,
    acknowledged_by_name, acknowledgement
FROM audit_findings WHERE finding_id = @finding_id AND tenant_id = @tenant_id;

-- name: FindingAcknowledge :one
UPDATE audit_findings SET acknowledged_at = @acknowledged_at::timestamptz, acknowledged_by = @acknowledged_by,
    acknowledged_by_name = @acknowledged_by_name, acknowledgement = @acknowledgement
WHERE tenant_id = @tenant_id AND finding_id = @finding_id AND acknowledged_at IS NULL
RETURNING operation_id::text AS operation_id;
