-- +goose Up
-- See the PostgreSQL migration: committed transitions of processes that
-- serve no metrics, drained and counted by a running settle serve. Times
-- are INTEGER microseconds (UTC). Not append-only: draining deletes.
CREATE TABLE observations (
    observation_id INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id      TEXT    NOT NULL,
    operation_id   TEXT    NOT NULL DEFAULT '',
    target         TEXT    NOT NULL DEFAULT '',
    from_state     TEXT    NOT NULL DEFAULT '',
    to_state       TEXT    NOT NULL DEFAULT '',
    at             INTEGER NOT NULL,
    refused        INTEGER NOT NULL DEFAULT 0 CHECK (refused IN (0, 1)),
    CHECK (refused = (to_state = ''))
);
CREATE INDEX observations_tenant ON observations (tenant_id);

-- +goose Down
DROP TABLE observations;
