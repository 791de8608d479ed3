-- +goose Up
-- See the PostgreSQL migration: the append-only record of human actions,
-- both people's subjects and names on a resolution, and the quarantine's
-- scoping tenant.
CREATE TABLE actions (
    action_id    INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id    TEXT    NOT NULL,
    at           INTEGER NOT NULL,
    subject      TEXT    NOT NULL CHECK (subject <> ''),
    actor_name   TEXT    NOT NULL DEFAULT '',
    role         TEXT    NOT NULL CHECK (role <> ''),
    kind         TEXT    NOT NULL CHECK (kind IN ('resolution.propose', 'resolution.approve',
                     'resolution.reject', 'quarantine.resolve', 'token.create', 'token.revoke',
                     'callback.set', 'callback.remove')),
    object       TEXT    NOT NULL DEFAULT '',
    operation_id TEXT    NOT NULL DEFAULT '',
    reason       TEXT    NOT NULL DEFAULT '',
    request_id   TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX actions_tenant ON actions (tenant_id, action_id);
CREATE INDEX actions_operation ON actions (tenant_id, operation_id, action_id) WHERE operation_id <> '';

-- +goose StatementBegin
CREATE TRIGGER actions_no_update BEFORE UPDATE ON actions
BEGIN
    SELECT RAISE(ABORT, 'actions is append-only');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER actions_no_delete BEFORE DELETE ON actions
BEGIN
    SELECT RAISE(ABORT, 'actions is append-only');
END;
-- +goose StatementEnd

ALTER TABLE resolutions ADD COLUMN proposed_by_name TEXT NOT NULL DEFAULT '';
ALTER TABLE resolutions ADD COLUMN decided_by_name TEXT NOT NULL DEFAULT '';
UPDATE resolutions SET proposed_by_name = proposed_by,
    proposed_by = CASE WHEN instr(proposed_by, ':') > 0 THEN proposed_by ELSE 'cli:' || proposed_by END;
UPDATE resolutions SET decided_by_name = decided_by,
    decided_by = CASE WHEN instr(decided_by, ':') > 0 THEN decided_by ELSE 'cli:' || decided_by END
    WHERE decided_by <> '';

ALTER TABLE quarantine ADD COLUMN scope_tenant TEXT NOT NULL DEFAULT '';
UPDATE quarantine SET scope_tenant = CASE WHEN operation_id <> '' THEN operation_tenant ELSE claimed_tenant END;
ALTER TABLE quarantine ADD COLUMN resolved_by_name TEXT NOT NULL DEFAULT '';
UPDATE quarantine SET resolved_by_name = resolved_by,
    resolved_by = CASE WHEN instr(resolved_by, ':') > 0 THEN resolved_by ELSE 'cli:' || resolved_by END
    WHERE resolved_by <> '';
CREATE INDEX quarantine_scope ON quarantine (scope_tenant, quarantine_id);

-- +goose Down
DROP INDEX quarantine_scope;
ALTER TABLE quarantine DROP COLUMN resolved_by_name;
ALTER TABLE quarantine DROP COLUMN scope_tenant;
ALTER TABLE resolutions DROP COLUMN decided_by_name;
ALTER TABLE resolutions DROP COLUMN proposed_by_name;
DROP TRIGGER actions_no_delete;
DROP TRIGGER actions_no_update;
DROP TABLE actions;
