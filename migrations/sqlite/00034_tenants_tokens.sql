-- +goose Up
-- See the PostgreSQL migration: the tenants settle knows, token names and
-- last use, when a delivery was last tried, and the kinds of action left
-- to the Go code. Times are INTEGER microseconds (UTC).
CREATE TABLE tenants (
    tenant_id  TEXT    PRIMARY KEY,
    created_at INTEGER NOT NULL
);
INSERT INTO tenants (tenant_id, created_at)
SELECT tenant_id, min(at) FROM (
    SELECT tenant_id, created_at AS at FROM api_tokens
    UNION ALL SELECT tenant_id, created_at FROM tenant_callbacks
    UNION ALL SELECT tenant_id, updated_at FROM tenant_params
    UNION ALL SELECT tenant_id, min(created_at) FROM operation_ledger GROUP BY tenant_id
) GROUP BY tenant_id;

ALTER TABLE api_tokens ADD COLUMN name TEXT NOT NULL DEFAULT 'unnamed (created before names)'
    CHECK (length(name) BETWEEN 1 AND 80);
ALTER TABLE api_tokens ADD COLUMN last_used_at INTEGER;

ALTER TABLE callback_outbox ADD COLUMN last_attempt_at INTEGER;

-- SQLite cannot drop a CHECK constraint, so the actions table is rebuilt
-- without the one on kind, with its indexes and append-only triggers, as
-- 00028 did; it is the last such rebuild for a new kind.
CREATE TABLE actions_new (
    action_id    INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id    TEXT    NOT NULL,
    at           INTEGER NOT NULL,
    subject      TEXT    NOT NULL CHECK (subject <> ''),
    actor_name   TEXT    NOT NULL DEFAULT '',
    role         TEXT    NOT NULL CHECK (role <> ''),
    kind         TEXT    NOT NULL CHECK (kind <> ''),
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
-- The actions keep no kind CHECK going down: the older list would have to
-- drop the newer kinds' records, and the record is append-only.
ALTER TABLE callback_outbox DROP COLUMN last_attempt_at;
ALTER TABLE api_tokens DROP COLUMN last_used_at;
ALTER TABLE api_tokens DROP COLUMN name;
DROP TABLE tenants;
