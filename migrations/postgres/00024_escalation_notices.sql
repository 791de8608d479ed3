-- +goose Up
-- Escalation notices to the owning team of an operation's target, written
-- by the statement that records the move to ESCALATED, so a committed
-- escalation always has its notice (reconciler/escalations.go). Unlike
-- callback_outbox it does not depend on a tenant callback: the team is
-- found from the target's contract when the notice is delivered.
CREATE TABLE escalation_outbox (
    notice_id       bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id       text        NOT NULL,
    operation_id    uuid        NOT NULL,
    fence_token     bigint      NOT NULL,
    created_at      timestamptz NOT NULL,
    next_attempt_at timestamptz NOT NULL,
    attempts        int         NOT NULL DEFAULT 0,
    delivered_at    timestamptz,
    last_status     int,
    last_error      text        NOT NULL DEFAULT '',
    -- One notice per escalation (an operation escalated again after a
    -- resolution has moved on to a new fence).
    UNIQUE (tenant_id, operation_id, fence_token),
    FOREIGN KEY (tenant_id, operation_id) REFERENCES operation_ledger (tenant_id, operation_id)
);
CREATE INDEX escalation_outbox_due ON escalation_outbox (next_attempt_at)
    WHERE delivered_at IS NULL;

-- The daily digests sent, one row per owning team and UTC day, so that a
-- new leader does not send the day's digest again.
CREATE TABLE escalation_digests (
    team    text        NOT NULL,
    day     date        NOT NULL,
    sent_at timestamptz NOT NULL,
    PRIMARY KEY (team, day)
);

-- +goose Down
DROP TABLE escalation_digests;
DROP TABLE escalation_outbox;
