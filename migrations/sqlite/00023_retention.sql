-- +goose Up
-- See the PostgreSQL migration. SQLite has no session settings: retention
-- and erasure insert the one row of retention_unlock inside their own
-- IMMEDIATE transaction and delete it before they commit, so the row is
-- never visible to anyone else (one writer; readers see only commits), and
-- the event log and the actions record refuse every other DELETE.
CREATE TABLE retention_unlock (
    one INTEGER PRIMARY KEY CHECK (one = 1)
);
DROP TRIGGER operation_events_no_delete;
-- +goose StatementBegin
CREATE TRIGGER operation_events_no_delete BEFORE DELETE ON operation_events
WHEN NOT EXISTS (SELECT 1 FROM retention_unlock)
BEGIN
    SELECT RAISE(ABORT, 'operation_events is append-only');
END;
-- +goose StatementEnd
DROP TRIGGER actions_no_delete;
-- +goose StatementBegin
CREATE TRIGGER actions_no_delete BEFORE DELETE ON actions
WHEN NOT EXISTS (SELECT 1 FROM retention_unlock)
BEGIN
    SELECT RAISE(ABORT, 'actions is append-only');
END;
-- +goose StatementEnd

CREATE TABLE tenant_erasures (
    erasure_id  INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id   TEXT    NOT NULL,
    at          INTEGER NOT NULL,
    subject     TEXT    NOT NULL CHECK (subject <> ''),
    actor_name  TEXT    NOT NULL DEFAULT '',
    role        TEXT    NOT NULL DEFAULT '',
    forced      INTEGER NOT NULL,
    unfinished  INTEGER NOT NULL DEFAULT 0,
    counts      TEXT    NOT NULL
);
CREATE INDEX tenant_erasures_tenant ON tenant_erasures (tenant_id, erasure_id);

-- The statements name the final states as literals, so SQLite can prove
-- the partial indexes' WHERE.
CREATE INDEX operation_ledger_final_updated ON operation_ledger (updated_at)
    WHERE state IN ('SUCCEEDED', 'FAILED_TERMINAL');
CREATE INDEX operation_ledger_redactable ON operation_ledger (updated_at)
    WHERE state IN ('SUCCEEDED', 'FAILED_TERMINAL') AND length(payload) > 0;
CREATE INDEX webhook_inbox_processed ON webhook_inbox (processed_at)
    WHERE processed_at IS NOT NULL;
CREATE INDEX quarantine_resolved ON quarantine (resolved_at)
    WHERE resolved_at IS NOT NULL;
CREATE INDEX quarantine_delivery ON quarantine (delivery_id)
    WHERE delivery_id IS NOT NULL;

-- +goose Down
DROP INDEX quarantine_delivery;
DROP INDEX quarantine_resolved;
DROP INDEX webhook_inbox_processed;
DROP INDEX operation_ledger_redactable;
DROP INDEX operation_ledger_final_updated;
DROP TABLE tenant_erasures;
DROP TRIGGER actions_no_delete;
-- +goose StatementBegin
CREATE TRIGGER actions_no_delete BEFORE DELETE ON actions
BEGIN
    SELECT RAISE(ABORT, 'actions is append-only');
END;
-- +goose StatementEnd
DROP TRIGGER operation_events_no_delete;
-- +goose StatementBegin
CREATE TRIGGER operation_events_no_delete BEFORE DELETE ON operation_events
BEGIN
    SELECT RAISE(ABORT, 'operation_events is append-only');
END;
-- +goose StatementEnd
DROP TABLE retention_unlock;
