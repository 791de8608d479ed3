-- +goose Up
CREATE TABLE resolutions (
    resolution_id INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id     TEXT    NOT NULL,
    operation_id  TEXT    NOT NULL,
    fence_token   INTEGER NOT NULL,
    to_state      TEXT    NOT NULL CHECK (to_state IN ('SUCCEEDED', 'FAILED_TERMINAL')),
    remote_ref    TEXT    NOT NULL DEFAULT '',
    reason        TEXT    NOT NULL,
    proposed_by   TEXT    NOT NULL,
    proposed_at   INTEGER NOT NULL,
    decided_by    TEXT    NOT NULL DEFAULT '',
    decided_at    INTEGER,
    decision      TEXT    NOT NULL DEFAULT '',
    decision_why  TEXT    NOT NULL DEFAULT '',
    CHECK (decided_at IS NULL OR decided_by <> ''),
    FOREIGN KEY (tenant_id, operation_id) REFERENCES operation_ledger (tenant_id, operation_id)
);
CREATE UNIQUE INDEX resolutions_open ON resolutions (tenant_id, operation_id) WHERE decided_at IS NULL;
CREATE INDEX resolutions_tenant ON resolutions (tenant_id, resolution_id);

-- +goose Down
DROP TABLE resolutions;
