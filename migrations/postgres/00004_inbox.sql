-- +goose Up
-- Verified webhook deliveries, stored before the 2xx and processed after it.
CREATE TABLE webhook_inbox (
    delivery_id     bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    target          text        NOT NULL,
    body_sha256     bytea       NOT NULL,
    body            bytea,                  -- NULL once processed
    received_at     timestamptz NOT NULL,
    next_attempt_at timestamptz,            -- NULL once processed
    attempts        int         NOT NULL DEFAULT 0,
    processed_at    timestamptz,
    outcome         text        NOT NULL DEFAULT '',
    UNIQUE (target, body_sha256)            -- a redelivery is processed once
);
CREATE INDEX webhook_inbox_due ON webhook_inbox (next_attempt_at) WHERE processed_at IS NULL;

-- Inbound events that could not be attributed safely or contradict the
-- ledger: minimum identifying data only, resolved by explicit review.
CREATE TABLE quarantine (
    quarantine_id     bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    target            text        NOT NULL,
    delivery_id       bigint,
    reason            text        NOT NULL,
    event_id          text        NOT NULL DEFAULT '',
    claimed_reference text        NOT NULL DEFAULT '',
    claimed_tenant    text        NOT NULL DEFAULT '',
    remote_id         text        NOT NULL DEFAULT '',
    operation_id      text        NOT NULL DEFAULT '',
    operation_tenant  text        NOT NULL DEFAULT '',
    quarantined_at    timestamptz NOT NULL,
    resolved_at       timestamptz,
    resolved_by       text        NOT NULL DEFAULT '',
    resolution        text        NOT NULL DEFAULT ''
);
CREATE INDEX quarantine_open ON quarantine (quarantined_at) WHERE resolved_at IS NULL;

-- +goose Down
DROP TABLE quarantine;
DROP TABLE webhook_inbox;
