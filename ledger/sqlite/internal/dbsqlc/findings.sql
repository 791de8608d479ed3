-- name: FindingList :many
-- See the PostgreSQL query. The reviewer's tenants are a JSON array;
-- times are INTEGER microseconds.
SELECT finding_id, tenant_id, operation_id, target, kind, remote_ids, evidence, found_at,
    escalated, resolved_at, acknowledged_at, acknowledged_by, acknowledged_by_name, acknowledgement
FROM audit_findings
WHERE (CAST(@all_tenants AS BOOLEAN) OR tenant_id IN (SELECT value FROM json_each(CAST(@tenants AS TEXT))))
    AND (CAST(@operation_id AS TEXT) = '' OR operation_id = CAST(@operation_id AS TEXT))
    AND (NOT CAST(@open_only AS BOOLEAN) OR (acknowledged_at IS NULL AND resolved_at IS NULL))
    AND (NOT CAST(@resolved_only AS BOOLEAN) OR acknowledged_at IS NOT NULL OR resolved_at IS NOT NULL)
    AND (CAST(@target AS TEXT) = '' OR target = CAST(@target AS TEXT))
    AND (CAST(@kind AS TEXT) = '' OR kind = CAST(@kind AS TEXT))
    AND (sqlc.narg(before) IS NULL OR found_at < sqlc.narg(before))
    -- One bound on the id, so that SQLite's one plan for every value
    -- starts a continued page at its cursor instead of reading every
    -- newer row (as the quarantine's list does).
    AND finding_id < CASE WHEN CAST(@after_id AS INTEGER) = 0 THEN 9223372036854775807 ELSE CAST(@after_id AS INTEGER) END
ORDER BY finding_id DESC
LIMIT @max_rows;

-- name: FindingSearch :many
-- FindingList for a pasted reference, driven by the findings that name it
-- (each arm of the union an index of migration 00038): those of an
-- operation settle has seen the object under (operation_objects, which
-- holds a finding's own ids) and those whose operation id starts with the
-- reference (a whole id among them; lowercase hex and '-' are all below
-- '~'). SQLite plans the list once for every value, so its "@ref = '' OR
-- ..." walked every open finding (95 ms at 100,000). UNION ALL, because a
-- UNION is merged in id order, which SQLite got by reading the findings
-- whole instead of the prefix's range (35 ms); IN does not mind a finding
-- named twice.
WITH hits AS (
    SELECT f.finding_id AS hit FROM operation_objects o
        JOIN audit_findings f ON f.tenant_id = o.tenant_id AND f.operation_id = o.operation_id
        WHERE o.object_id = CAST(@ref AS TEXT)
    UNION ALL SELECT a.finding_id FROM audit_findings a
        WHERE CAST(@op_prefix AS TEXT) <> '' AND lower(a.operation_id) >= CAST(@op_prefix AS TEXT)
            AND lower(a.operation_id) < CAST(@op_prefix AS TEXT) || '~'
)
SELECT finding_id, tenant_id, operation_id, target, kind, remote_ids, evidence, found_at,
    escalated, resolved_at, acknowledged_at, acknowledged_by, acknowledged_by_name, acknowledgement
FROM audit_findings
WHERE finding_id IN (SELECT hit FROM hits)
    AND (CAST(@all_tenants AS BOOLEAN) OR tenant_id IN (SELECT value FROM json_each(CAST(@tenants AS TEXT))))
    AND (CAST(@operation_id AS TEXT) = '' OR operation_id = CAST(@operation_id AS TEXT))
    AND (NOT CAST(@open_only AS BOOLEAN) OR (acknowledged_at IS NULL AND resolved_at IS NULL))
    AND (NOT CAST(@resolved_only AS BOOLEAN) OR acknowledged_at IS NOT NULL OR resolved_at IS NOT NULL)
    AND (CAST(@target AS TEXT) = '' OR target = CAST(@target AS TEXT))
    AND (CAST(@kind AS TEXT) = '' OR kind = CAST(@kind AS TEXT))
    AND (sqlc.narg(before) IS NULL OR found_at < sqlc.narg(before))
    AND (CAST(@after_id AS INTEGER) = 0 OR finding_id < CAST(@after_id AS INTEGER))
ORDER BY finding_id DESC
LIMIT @max_rows;

-- name: FindingGet :one
SELECT finding_id, tenant_id, operation_id, target, kind, remote_ids, evidence, found_at,
    escalated, resolved_at, acknowledged_at, acknowledged_by, acknowledged_by_name, acknowledgement
FROM audit_findings WHERE finding_id = CAST(sqlc.arg(finding_id) AS INTEGER) AND tenant_id = @tenant_id;

-- name: FindingAcknowledge :one
UPDATE audit_findings SET acknowledged_at = CAST(sqlc.arg(acknowledged_at) AS INTEGER),
    acknowledged_by = @acknowledged_by, acknowledged_by_name = @acknowledged_by_name,
    acknowledgement = @acknowledgement
WHERE tenant_id = @tenant_id AND finding_id = CAST(sqlc.arg(finding_id) AS INTEGER) AND acknowledged_at IS NULL
RETURNING operation_id;
