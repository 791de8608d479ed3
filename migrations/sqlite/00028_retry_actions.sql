-- +goose Up
-- See the PostgreSQL migration: the two retry actions. SQLite cannot alter
-- a CHECK constraint, so the actions table is rebuilt with its indexes and
-- append-only triggers, as 00020 did.
CREATE TABLE actions_new (
    action_id    INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id    TEXT    NOT NULL,
    at           INTEGER NOT NULL,
    subject      TEXT    NOT NULL CHECK (subject <> ''),
    actor_name   TEXT    NOT NULL DEFAULT '',
    role         TEXT    NOT NULL CHECK (role <> ''),
    kind         TEXT    NOT NULL CHECK (kind IN ('resolution.propose', 'resolution.approve',
                     'resolution.reject', 'quarantine.resolve', 'token.create', 'token.revoke',
                     'callback.set', 'callback.remove', 'quarantine.link', 'finding.acknowledge',
                     'tenant_param.set', 'tenant_param.unset',
                     'callback.retry', 'escalation_notice.retry')),
    object       TEXT    NOT NULL DEFAULT '',
    operation_id TEXT    NOT NULL DEFAULT '',
    reason       TEXT    NOT NULL DEFAULT '',
    request_id   TEXT    NOT NULL DEFAULT ''
);
INSERT INTO actions_new SELECT action_id, tenant_id, at, subject, actor_name, role, kind, object,
    operation_id, reason, request_id FROM actions;
DROP TABLE actions;
ALTER TABLE actions_new RENAME TO actions;
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
WHEN NOT EXISTS (SELECT 1 FROM retention_unlock)
BEGIN
    SELECT RAISE(ABORT, 'actions is append-only');
END;
-- +goose StatementEnd

-- +goose Down
-- SQLite has no NOT VALID: the older list cannot hold the retry actions,
-- so going down drops them (as 00020's Down drops its own).
CREATE TABLE actions_old (
    action_id    INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id    TEXT    NOT NULL,
    at           INTEGER NOT NULL,
    subject      TEXT    NOT NULL CHECK (subject <> ''),
    actor_name   TEXT    NOT NULL DEFAULT '',
    role         TEXT    NOT NULL CHECK (role <> ''),
    kind         TEXT    NOT NULL CHECK (kind IN ('resolution.propose', 'resolution.approve',
                     'resolution.reject', 'quarantine.resolve', 'token.create', 'token.revoke',
                     'callback.set', 'callback.remove', 'quarantine.link', 'finding.acknowledge',
                     'tenant_param.set', 'tenant_param.unset')),
    object       TEXT    NOT NULL DEFAULT '',
    operation_id TEXT    NOT NULL DEFAULT '',
    reason       TEXT    NOT NULL DEFAULT '',
    request_id   TEXT    NOT NULL DEFAULT ''
);
INSERT INTO actions_old SELECT action_id, tenant_id, at, subject, actor_name, role, kind, object,
    operation_id, reason, request_id FROM actions
    WHERE kind NOT IN ('callback.retry', 'escalation_notice.retry');
DROP TABLE actions;
ALTER TABLE actions_old RENAME TO actions;
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
WHEN NOT EXISTS (SELECT 1 FROM retention_unlock)
BEGIN
    SELECT RAISE(ABORT, 'actions is append-only');
END;
-- +goose StatementEnd

