-- +goose Up
-- A tenant's callback endpoint. The secret signs every notification
-- (HMAC-SHA256), so it is kept as is; settle generated it and showed it once.
CREATE TABLE tenant_callbacks (
    tenant_id  text        PRIMARY KEY,
    url        text        NOT NULL,
    secret     bytea       NOT NULL CHECK (length(secret) >= 32),
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);

-- Notifications to deliver, written by the statement that records the
-- transition, so a committed final state always has its notification.
CREATE TABLE callback_outbox (
    callback_id     bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id       text        NOT NULL,
    operation_id    uuid        NOT NULL,
    state           text        NOT NULL,
    fence_token     bigint      NOT NULL,
    created_at      timestamptz NOT NULL,
    next_attempt_at timestamptz NOT NULL,
    attempts        int         NOT NULL DEFAULT 0,
    delivered_at    timestamptz,
    last_status     int,
    last_error      text        NOT NULL DEFAULT '',
    -- One notification per state reached.
    UNIQUE (tenant_id, operation_id, state),
    FOREIGN KEY (tenant_id, operation_id) REFERENCES operation_ledger (tenant_id, operation_id)
);
-- Pending deliveries only, by tenant (claims are fair across tenants) and
-- due time; rows leave it once acknowledged.
CREATE INDEX callback_outbox_due ON callback_outbox (tenant_id, next_attempt_at)
    WHERE delivered_at IS NULL;

-- +goose Down
DROP TABLE callback_outbox;
DROP TABLE tenant_callbacks;
