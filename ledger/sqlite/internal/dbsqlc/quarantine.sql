-- name: QuarantineList :many
-- See the PostgreSQL query. The reviewer's tenants are a JSON array;
-- times are INTEGER microseconds. SQLite does not fold a parameter's
-- "= ''" away as PostgreSQL does, so what should use an index is written
-- as one comparison: the page's continuation as a bound on the id, and
-- an operation id prefix (lowercase hex and '-', all below '~') as a
-- range.
SELECT quarantine_id, target, CAST(coalesce(delivery_id, 0) AS INTEGER) AS delivery_id, reason, event_id,
    claimed_reference, claimed_tenant, remote_id, operation_id, operation_tenant, quarantined_at,
    resolved_at, resolved_by, resolved_by_name, resolved_by_role, resolution_kind, resolution
FROM quarantine
WHERE (NOT CAST(@open_only AS BOOLEAN) OR resolved_at IS NULL)
    AND (NOT CAST(@resolved_only AS BOOLEAN) OR resolved_at IS NOT NULL)
    AND (scope_tenant <> '' AND (CAST(@all_tenants AS BOOLEAN) OR scope_tenant IN (SELECT value FROM json_each(CAST(@tenants AS TEXT))))
        OR (CAST(@unattributed AS BOOLEAN) AND scope_tenant = ''))
    AND (CAST(@any_item AS BOOLEAN) OR (operation_id <> '' AND operation_id = CAST(@about_operation AS TEXT))
        OR (claimed_reference <> '' AND claimed_reference = CAST(@about_reference AS TEXT))
        OR (remote_id <> '' AND remote_id = CAST(@about_remote AS TEXT)))
    AND (CAST(@target AS TEXT) = '' OR target = CAST(@target AS TEXT))
    AND (CAST(@ref AS TEXT) = '' OR lower(event_id) = lower(CAST(@ref AS TEXT))
        OR lower(claimed_reference) = lower(CAST(@ref AS TEXT))
        OR remote_id = CAST(@ref AS TEXT) OR operation_id = CAST(@ref AS TEXT)
        OR (CAST(@op_prefix AS TEXT) <> '' AND operation_id >= CAST(@op_prefix AS TEXT)
            AND operation_id < CAST(@op_prefix AS TEXT) || '~'))
    AND (CAST(@reason AS TEXT) = '' OR instr(lower(reason), lower(CAST(@reason AS TEXT))) > 0)
    AND (sqlc.narg(before) IS NULL OR quarantined_at < sqlc.narg(before))
    AND quarantine_id < CASE WHEN CAST(@after_id AS INTEGER) = 0 THEN 9223372036854775807 ELSE CAST(@after_id AS INTEGER) END
ORDER BY quarantine_id DESC
LIMIT @max_rows;

-- name: QuarantineSearch :many
-- QuarantineList for a pasted reference, driven by the items that name it
-- (each arm of the union an index) and then narrowed as the list is.
-- SQLite plans a statement once for every value of its parameters, so
-- the list's "@ref = '' OR ..." cannot use these indexes: at 100,000 events
-- it read the whole open queue (100 ms) where this reads a few rows.
WITH hits AS (
    SELECT quarantine_id AS hit FROM quarantine WHERE lower(event_id) = lower(CAST(@ref AS TEXT))
    UNION SELECT quarantine_id FROM quarantine WHERE lower(claimed_reference) = lower(CAST(@ref AS TEXT))
    UNION SELECT quarantine_id FROM quarantine WHERE remote_id = CAST(@ref AS TEXT)
    UNION SELECT quarantine_id FROM quarantine WHERE operation_id = CAST(@ref AS TEXT)
    UNION SELECT quarantine_id FROM quarantine WHERE CAST(@op_prefix AS TEXT) <> ''
        AND operation_id >= CAST(@op_prefix AS TEXT) AND operation_id < CAST(@op_prefix AS TEXT) || '~'
)
SELECT quarantine_id, target, CAST(coalesce(delivery_id, 0) AS INTEGER) AS delivery_id, reason, event_id,
    claimed_reference, claimed_tenant, remote_id, operation_id, operation_tenant, quarantined_at,
    resolved_at, resolved_by, resolved_by_name, resolved_by_role, resolution_kind, resolution
FROM quarantine
WHERE quarantine_id IN (SELECT hit FROM hits)
    AND (NOT CAST(@open_only AS BOOLEAN) OR resolved_at IS NULL)
    AND (NOT CAST(@resolved_only AS BOOLEAN) OR resolved_at IS NOT NULL)
    AND (scope_tenant <> '' AND (CAST(@all_tenants AS BOOLEAN) OR scope_tenant IN (SELECT value FROM json_each(CAST(@tenants AS TEXT))))
        OR (CAST(@unattributed AS BOOLEAN) AND scope_tenant = ''))
    AND (CAST(@any_item AS BOOLEAN) OR (operation_id <> '' AND operation_id = CAST(@about_operation AS TEXT))
        OR (claimed_reference <> '' AND claimed_reference = CAST(@about_reference AS TEXT))
        OR (remote_id <> '' AND remote_id = CAST(@about_remote AS TEXT)))
    AND (CAST(@target AS TEXT) = '' OR target = CAST(@target AS TEXT))
    AND (CAST(@reason AS TEXT) = '' OR instr(lower(reason), lower(CAST(@reason AS TEXT))) > 0)
    AND (sqlc.narg(before) IS NULL OR quarantined_at < sqlc.narg(before))
    AND quarantine_id < CASE WHEN CAST(@after_id AS INTEGER) = 0 THEN 9223372036854775807 ELSE CAST(@after_id AS INTEGER) END
ORDER BY quarantine_id DESC
LIMIT @max_rows;

-- name: QuarantineIDBoundBefore :one
-- The newest id among the events quarantined before @before, open or
-- resolved, of any tenant (0: none): an upper bound on the ids the age
-- filter can match, read from quarantine_time's entries alone (named:
-- unnamed, SQLite reads max(quarantine_id) backward by rowid through every
-- newer event, 75 ms at 100,000 where this takes 1 ms).
SELECT CAST(coalesce(max(quarantine_id), 0) AS INTEGER) AS bound FROM quarantine INDEXED BY quarantine_time WHERE quarantined_at < CAST(sqlc.arg(before) AS INTEGER);
