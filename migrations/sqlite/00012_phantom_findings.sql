-- +goose Up
-- See the PostgreSQL migration: phantom findings, and the auditor's walk
-- covers FAILED_TERMINAL. SQLite cannot alter a CHECK constraint, so the
-- findings table is rebuilt; nothing references it.
CREATE TABLE audit_findings_new (
    finding_id   INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id    TEXT    NOT NULL,
    operation_id TEXT    NOT NULL,
    target       TEXT    NOT NULL,
    kind         TEXT    NOT NULL CHECK (kind IN ('duplicate', 'loss', 'phantom')),
    remote_ids   TEXT    NOT NULL DEFAULT '[]',
    evidence     TEXT    NOT NULL DEFAULT '{}',
    found_at     INTEGER NOT NULL,
    escalated    INTEGER NOT NULL DEFAULT 0 CHECK (escalated IN (0, 1)),
    resolved_at  INTEGER,
    FOREIGN KEY (tenant_id, operation_id) REFERENCES operation_ledger (tenant_id, operation_id)
);
INSERT INTO audit_findings_new (finding_id, tenant_id, operation_id, target, kind, remote_ids, evidence,
        found_at, escalated, resolved_at)
    SELECT finding_id, tenant_id, operation_id, target, kind, remote_ids, evidence, found_at, escalated, resolved_at
    FROM audit_findings;
DROP TABLE audit_findings;
ALTER TABLE audit_findings_new RENAME TO audit_findings;
CREATE UNIQUE INDEX audit_findings_open ON audit_findings (tenant_id, operation_id, kind)
    WHERE resolved_at IS NULL;
CREATE INDEX audit_findings_tenant_found ON audit_findings (tenant_id, found_at);

DROP INDEX operation_ledger_audit;
CREATE INDEX operation_ledger_audit ON operation_ledger (target, created_at, operation_id)
    WHERE state IN ('SUCCEEDED', 'FAILED_TERMINAL');

-- +goose Down
DROP INDEX operation_ledger_audit;
CREATE INDEX operation_ledger_audit ON operation_ledger (target, created_at, operation_id)
    WHERE state = 'SUCCEEDED';
CREATE TABLE audit_findings_old (
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
INSERT INTO audit_findings_old (finding_id, tenant_id, operation_id, target, kind, remote_ids, evidence,
        found_at, escalated, resolved_at)
    SELECT finding_id, tenant_id, operation_id, target, kind, remote_ids, evidence, found_at, escalated, resolved_at
    FROM audit_findings WHERE kind <> 'phantom';
DROP TABLE audit_findings;
ALTER TABLE audit_findings_old RENAME TO audit_findings;
CREATE UNIQUE INDEX audit_findings_open ON audit_findings (tenant_id, operation_id, kind)
    WHERE resolved_at IS NULL;
CREATE INDEX audit_findings_tenant_found ON audit_findings (tenant_id, found_at);
