-- +goose Up
-- Manual resolutions of ESCALATED operations: proposed by one person,
-- approved (or rejected) by another.
CREATE TABLE resolutions (
    resolution_id bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id     text        NOT NULL,
    operation_id  uuid        NOT NULL,
    fence_token   bigint      NOT NULL,
    to_state      text        NOT NULL CHECK (to_state IN ('SUCCEEDED', 'FAILED_TERMINAL')),
    remote_ref    text        NOT NULL DEFAULT '',
    reason        text        NOT NULL,
    proposed_by   text        NOT NULL,
    proposed_at   timestamptz NOT NULL,
    decided_by    text        NOT NULL DEFAULT '',
    decided_at    timestamptz,
    decision      text        NOT NULL DEFAULT '',
    decision_why  text        NOT NULL DEFAULT '',
    CHECK (decided_at IS NULL OR decided_by <> ''),
    FOREIGN KEY (tenant_id, operation_id) REFERENCES operation_ledger (tenant_id, operation_id)
);
-- One open proposal per operation.
CREATE UNIQUE INDEX resolutions_open ON resolutions (tenant_id, operation_id) WHERE decided_at IS NULL;
CREATE INDEX resolutions_tenant ON resolutions (tenant_id, resolution_id);

-- +goose Down
DROP TABLE resolutions;
