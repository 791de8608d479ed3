-- +goose Up
-- What the auditor found when it compared a SUCCEEDED operation with the
-- target's own records: more than one remote object for our reference
-- (duplicate) or none (loss). SUCCEEDED is final, so a finding is how the
-- discrepancy reaches people; the operation itself never changes.
CREATE TABLE audit_findings (
    finding_id   bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id    text        NOT NULL,
    operation_id uuid        NOT NULL,
    target       text        NOT NULL,
    kind         text        NOT NULL CHECK (kind IN ('duplicate', 'loss')),
    remote_ids   text        NOT NULL DEFAULT '[]',  -- JSON array of the target's object ids
    evidence     jsonb       NOT NULL DEFAULT '{}',  -- counts, ids, lookup status; never a payload
    found_at     timestamptz NOT NULL,
    escalated    boolean     NOT NULL DEFAULT false,
    resolved_at  timestamptz,
    FOREIGN KEY (tenant_id, operation_id) REFERENCES operation_ledger (tenant_id, operation_id)
);
-- Re-auditing finds the same discrepancy again; it stays one open finding.
CREATE UNIQUE INDEX audit_findings_open ON audit_findings (tenant_id, operation_id, kind)
    WHERE resolved_at IS NULL;
-- Per-tenant figures for managers: findings since a date.
CREATE INDEX audit_findings_tenant_found ON audit_findings (tenant_id, found_at);

-- The periodic auditor's position per target, so that it walks SUCCEEDED
-- operations a batch at a time and starts over (NULLs) at the end.
CREATE TABLE audit_cursor (
    target            text        PRIMARY KEY,
    last_created_at   timestamptz,
    last_operation_id uuid,
    updated_at        timestamptz NOT NULL
);

-- The auditor's walk: SUCCEEDED operations of one target in creation order.
CREATE INDEX operation_ledger_audit ON operation_ledger (target, created_at, operation_id)
    WHERE state = 'SUCCEEDED';

-- +goose Down
DROP INDEX operation_ledger_audit;
DROP TABLE audit_cursor;
DROP TABLE audit_findings;
