-- +goose Up
-- Erasing a tenant deletes the quarantined events that name it either as
-- their scope or as the tenant of the operation they were linked to
-- (scope_tenant = $1 OR operation_tenant = $1). quarantine_scope serves
-- the first half; without an index on the second the statement read the
-- whole quarantine, about 10,000 rows at 1,000,000 operations
-- (scripts/plans-10m.sh with ROWS=1000000).
CREATE INDEX quarantine_operation_tenant ON quarantine (operation_tenant);

-- +goose Down
DROP INDEX quarantine_operation_tenant;
