-- +goose Up
-- See the PostgreSQL migration: tenants' named request parameters, and the
-- two parameter actions. Times are INTEGER microseconds (UTC). SQLite has
-- no regular expressions: GLOB holds the name to a-z, 0-9 and '_' after a
-- letter, and the value to no C0 or C1 control character.
CREATE TABLE tenant_params (
    tenant_id  TEXT    NOT NULL,
    name       TEXT    NOT NULL CHECK (length(name) BETWEEN 1 AND 32 AND name GLOB '[a-z]*'
                           AND NOT name GLOB '*[^a-z0-9_]*'),
    value      TEXT    NOT NULL CHECK (length(value) BETWEEN 1 AND 256 AND value = trim(value, ' ')
                           AND NOT value GLOB ('*[' || char(1) || '-' || char(31) || char(127)
                               || char(128) || '-' || char(159) || ']*')),
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, name)
);

-- SQLite cannot alter a CHECK constraint, so the actions table is rebuilt
-- with its indexes and append-only triggers, as 00017 did.
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
                     'tenant_param.set', 'tenant_param.unset')),
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
BEGIN
    SELECT RAISE(ABORT, 'actions is append-only');
END;
-- +goose StatementEnd

-- +goose Down
-- SQLite has no NOT VALID: the older list cannot hold the parameter
-- actions, so going down drops them (as 00017's Down drops its own).
CREATE TABLE actions_old (
    action_id    INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id    TEXT    NOT NULL,
    at           INTEGER NOT NULL,
    subject      TEXT    NOT NULL CHECK (subject <> ''),
    actor_name   TEXT    NOT NULL DEFAULT '',
    role         TEXT    NOT NULL CHECK (role <> ''),
    kind         TEXT    NOT NULL CHECK (kind IN ('resolution.propose', 'resolution.approve',
                     'resolution.reject', 'quarantine.resolve', 'token.create', 'token.revoke',
                     'callback.set', 'callback.remove', 'quarantine.link', 'finding.acknowledge')),
    object       TEXT    NOT NULL DEFAULT '',
    operation_id TEXT    NOT NULL DEFAULT '',
    reason       TEXT    NOT NULL DEFAULT '',
    request_id   TEXT    NOT NULL DEFAULT ''
);
INSERT INTO actions_old SELECT action_id, tenant_id, at, subject, actor_name, role, kind, object,
    operation_id, reason, request_id FROM actions
    WHERE kind NOT IN ('tenant_param.set', 'tenant_param.unset');
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
BEGIN
    SELECT RAISE(ABORT, 'actions is append-only');
END;
-- +goose StatementEnd
DROP TABLE tenant_params;
