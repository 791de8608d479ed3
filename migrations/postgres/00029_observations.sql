-- +goose Up
-- What a process serving no metrics (a CLI command: settle escalation
-- approve, settle drill, …) committed, held for a running settle serve to
-- count: each replica drains a bounded batch every few seconds (DELETE …
-- FOR UPDATE SKIP LOCKED … RETURNING), so each row is counted by one
-- replica, once. A row is a transition (from_state → to_state of one
-- operation) or, with refused, a creation refused as a payload conflict
-- (no operation, no states). Rows live seconds while a server runs; a
-- tenant's erasure deletes its own.
CREATE TABLE observations (
    observation_id bigserial   PRIMARY KEY,
    tenant_id      text        NOT NULL,
    operation_id   text        NOT NULL DEFAULT '',
    target         text        NOT NULL DEFAULT '',
    from_state     text        NOT NULL DEFAULT '',
    to_state       text        NOT NULL DEFAULT '',
    at             timestamptz NOT NULL,
    refused        boolean     NOT NULL DEFAULT false,
    CHECK (refused = (to_state = ''))
);
CREATE INDEX observations_tenant ON observations (tenant_id);

-- +goose Down
DROP TABLE observations;
