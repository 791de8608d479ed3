-- name: QuarantineList :many
-- The quarantine's review list, newest first by id (a page continued
-- after its last row moves no item when others are resolved meanwhile),
-- within the reviewer's tenants (scope_tenant; '' is an unattributed
-- item). Every narrowing is optional: '' or 0 or NULL is any.
SELECT quarantine_id, target, coalesce(delivery_id, 0)::bigint AS delivery_id, reason, event_id,
    claimed_reference, claimed_tenant, remote_id, operation_id, operation_tenant, quarantined_at,
    resolved_at, resolved_by, resolved_by_name, resolved_by_role, resolution_kind, resolution
FROM quarantine
WHERE (NOT @open_only::boolean OR resolved_at IS NULL)
    AND (NOT @resolved_only::boolean OR resolved_at IS NOT NULL)
    AND (scope_tenant <> '' AND (@all_tenants::boolean OR scope_tenant = ANY(@tenants::text[]))
        OR (@unattributed::boolean AND scope_tenant = ''))
    AND (@any_item::boolean OR (operation_id <> '' AND operation_id = @about_operation::text)
        OR (claimed_reference <> '' AND claimed_reference = @about_reference::text)
        OR (remote_id <> '' AND remote_id = @about_remote::text))
    AND (@target::text = '' OR target = @target::text)
    AND (@ref::text = '' OR lower(event_id) = lower(@ref::text) OR lower(claimed_reference) = lower(@ref::text)
        OR remote_id = @ref::text OR operation_id = @ref::text
        OR (@op_prefix::text <> '' AND operation_id LIKE @op_prefix::text || '%'))
    AND (@reason::text = '' OR strpos(lower(reason), lower(@reason::text)) > 0)
    AND (sqlc.narg(before)::timestamptz IS NULL OR quarantined_at < sqlc.narg(before)::timestamptz)
    AND (@after_id::bigint = 0 OR quarantine_id < @after_id::bigint)
ORDER BY quarantine_id DESC
LIMIT @max_rows;

-- name: QuarantineIDBoundBefore :one
-- The newest id among the events quarantined before @before, open or
-- resolved, of any tenant (0: none): an upper bound on the ids the age
-- filter can match, read from quarantine_time's entries alone. "+ 0"
-- keeps the planner from reading max(quarantine_id) backward through the
-- primary key, which passes every newer event.
SELECT CAST(coalesce(max(quarantine_id + 0), 0) AS BIGINT) AS bound FROM quarantine WHERE quarantined_at < @before::timestamptz;
