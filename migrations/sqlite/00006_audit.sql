-- +goose Up
-- See the PostgreSQL migration for what these tables mean. Times are INTEGER
-- microseconds since the Unix epoch, as everywhere in this schema.
CREATE TABLE audit_findings (
    finding_id   INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id    TEXT    NOT NULL,
    operation_id TEXT    NOT NULL,
    target       TEXT    NOT NULL,
    kind         TEXT    NOT NULL CHECK (kind IN ('duplicate', 'loss')),
    remote_ids   TEXT    NOT NULL DEFAULT '[]',
    evidence     TEXT    NOT NULL DEFAULT '{}',
    found_at     INTEGER NOT NULL,
    escalated    INTEGER NOT NULL DEFAULT 0 CHECK (escalated IN (0, 1)),
    resolved_at  INTEGER,
    FOREIGN KEY (tenant_id, operation_id) REFERENCES operation_ledger (tenant_id, operation_id)
);
CREATE UNIQUE INDEX audit_findings_open ON audit_findings (tenant_id, operation_id, kind)
    WHERE resolved_at IS NULL;
CREATE INDEX audit_findings_tenant_found ON audit_findings (tenant_id, found_at);

CREATE TABLE audit_cursor (
    target            TEXT    PRIMARY KEY,
    last_created_at   INTEGER,
    last_operation_id TEXT,
    updated_at        INTEGER NOT NULL
) WITHOUT ROWID;

CREATE INDEX operation_ledger_audit ON operation_ledger (target, created_at, operation_id)
    WHERE state = 'SUCCEEDED';

-- +goose Down
DROP INDEX operation_ledger_audit;
DROP TABLE audit_cursor;
DROP TABLE audit_findings;
