-- +goose Up
-- See the PostgreSQL migration: what a reviewer did with a quarantined
-- event ('linked', 'dismissed', '' while open) and their role, backfilled
-- from the actions table.
ALTER TABLE quarantine ADD COLUMN resolution_kind TEXT NOT NULL DEFAULT '';
ALTER TABLE quarantine ADD COLUMN resolved_by_role TEXT NOT NULL DEFAULT '';
UPDATE quarantine SET
    resolution_kind = coalesce((SELECT CASE WHEN a.kind = 'quarantine.link' THEN 'linked' ELSE 'dismissed' END
        FROM actions a WHERE a.tenant_id = quarantine.scope_tenant AND a.object = CAST(quarantine.quarantine_id AS TEXT)
            AND a.kind IN ('quarantine.link', 'quarantine.resolve') ORDER BY a.action_id DESC LIMIT 1), 'dismissed'),
    resolved_by_role = coalesce((SELECT a.role
        FROM actions a WHERE a.tenant_id = quarantine.scope_tenant AND a.object = CAST(quarantine.quarantine_id AS TEXT)
            AND a.kind IN ('quarantine.link', 'quarantine.resolve') ORDER BY a.action_id DESC LIMIT 1), '')
    WHERE resolved_at IS NOT NULL;
CREATE INDEX quarantine_open_id ON quarantine (quarantine_id) WHERE resolved_at IS NULL;
CREATE INDEX quarantine_event_id ON quarantine (lower(event_id));
CREATE INDEX quarantine_reference ON quarantine (lower(claimed_reference));
CREATE INDEX quarantine_remote_id ON quarantine (remote_id);
CREATE INDEX quarantine_operation ON quarantine (operation_id);

-- +goose Down
DROP INDEX quarantine_operation;
DROP INDEX quarantine_remote_id;
DROP INDEX quarantine_reference;
DROP INDEX quarantine_event_id;
DROP INDEX quarantine_open_id;
ALTER TABLE quarantine DROP COLUMN resolved_by_role;
ALTER TABLE quarantine DROP COLUMN resolution_kind;
