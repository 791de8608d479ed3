-- +goose Up
-- A proposal's kind is checked in Go (ledger.ValidateProposal; a
-- conformance case writes every kind through both stores), not by a list
-- in the schema, so that a new kind needs no migration. SQLite cannot
-- change a CHECK constraint: the table is rebuilt, with the same rows,
-- one last time for its kinds. The column only refuses an empty kind.
CREATE TABLE resolutions_new (
    resolution_id    INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id        TEXT    NOT NULL,
    operation_id     TEXT    NOT NULL,
    fence_token      INTEGER NOT NULL,
    to_state         TEXT    NOT NULL CHECK (to_state IN ('SUCCEEDED', 'FAILED_TERMINAL', 'UNKNOWN')),
    remote_ref       TEXT    NOT NULL DEFAULT '',
    reason           TEXT    NOT NULL,
    proposed_by      TEXT    NOT NULL,
    proposed_at      INTEGER NOT NULL,
    decided_by       TEXT    NOT NULL DEFAULT '',
    decided_at       INTEGER,
    decision         TEXT    NOT NULL DEFAULT '',
    decision_why     TEXT    NOT NULL DEFAULT '',
    proposed_by_name TEXT    NOT NULL DEFAULT '',
    decided_by_name  TEXT    NOT NULL DEFAULT '',
    kind             TEXT    NOT NULL CHECK (kind <> ''),
    CHECK (decided_at IS NULL OR decided_by <> ''),
    FOREIGN KEY (tenant_id, operation_id) REFERENCES operation_ledger (tenant_id, operation_id)
);
INSERT INTO resolutions_new (resolution_id, tenant_id, operation_id, fence_token, to_state, remote_ref, reason,
    proposed_by, proposed_at, decided_by, decided_at, decision, decision_why, proposed_by_name, decided_by_name, kind)
SELECT resolution_id, tenant_id, operation_id, fence_token, to_state, remote_ref, reason,
    proposed_by, proposed_at, decided_by, decided_at, decision, decision_why, proposed_by_name, decided_by_name, kind
FROM resolutions;
DROP TABLE resolutions;
ALTER TABLE resolutions_new RENAME TO resolutions;
CREATE UNIQUE INDEX resolutions_open ON resolutions (tenant_id, operation_id) WHERE decided_at IS NULL;
CREATE INDEX resolutions_tenant ON resolutions (tenant_id, resolution_id);
CREATE INDEX resolutions_open_all ON resolutions (resolution_id) WHERE decided_at IS NULL;

-- +goose Down
CREATE TABLE resolutions_new (
    resolution_id    INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id        TEXT    NOT NULL,
    operation_id     TEXT    NOT NULL,
    fence_token      INTEGER NOT NULL,
    to_state         TEXT    NOT NULL CHECK (to_state IN ('SUCCEEDED', 'FAILED_TERMINAL', 'UNKNOWN')),
    remote_ref       TEXT    NOT NULL DEFAULT '',
    reason           TEXT    NOT NULL,
    proposed_by      TEXT    NOT NULL,
    proposed_at      INTEGER NOT NULL,
    decided_by       TEXT    NOT NULL DEFAULT '',
    decided_at       INTEGER,
    decision         TEXT    NOT NULL DEFAULT '',
    decision_why     TEXT    NOT NULL DEFAULT '',
    proposed_by_name TEXT    NOT NULL DEFAULT '',
    decided_by_name  TEXT    NOT NULL DEFAULT '',
    kind             TEXT    NOT NULL CHECK (kind IN ('confirm_succeeded', 'confirm_not_applied', 'replay', 'supersede')),
    CHECK (decided_at IS NULL OR decided_by <> ''),
    FOREIGN KEY (tenant_id, operation_id) REFERENCES operation_ledger (tenant_id, operation_id)
);
INSERT INTO resolutions_new (resolution_id, tenant_id, operation_id, fence_token, to_state, remote_ref, reason,
    proposed_by, proposed_at, decided_by, decided_at, decision, decision_why, proposed_by_name, decided_by_name, kind)
SELECT resolution_id, tenant_id, operation_id, fence_token, to_state, remote_ref, reason,
    proposed_by, proposed_at, decided_by, decided_at, decision, decision_why, proposed_by_name, decided_by_name, kind
FROM resolutions;
DROP TABLE resolutions;
ALTER TABLE resolutions_new RENAME TO resolutions;
CREATE UNIQUE INDEX resolutions_open ON resolutions (tenant_id, operation_id) WHERE decided_at IS NULL;
CREATE INDEX resolutions_tenant ON resolutions (tenant_id, resolution_id);
CREATE INDEX resolutions_open_all ON resolutions (resolution_id) WHERE decided_at IS NULL;
