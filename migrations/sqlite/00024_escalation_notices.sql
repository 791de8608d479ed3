-- +goose Up
-- See the PostgreSQL migration. Times are INTEGER microseconds (UTC).
CREATE TABLE escalation_outbox (
    notice_id       INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id       TEXT    NOT NULL,
    operation_id    TEXT    NOT NULL,
    fence_token     INTEGER NOT NULL,
    created_at      INTEGER NOT NULL,
    next_attempt_at INTEGER NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    delivered_at    INTEGER,
    last_status     INTEGER,
    last_error      TEXT    NOT NULL DEFAULT '',
    UNIQUE (tenant_id, operation_id, fence_token),
    FOREIGN KEY (tenant_id, operation_id) REFERENCES operation_ledger (tenant_id, operation_id)
);
CREATE INDEX escalation_outbox_due ON escalation_outbox (next_attempt_at) WHERE delivered_at IS NULL;

CREATE TABLE escalation_digests (
    team    TEXT    NOT NULL,
    day     TEXT    NOT NULL, -- YYYY-MM-DD, UTC
    sent_at INTEGER NOT NULL,
    PRIMARY KEY (team, day)
);

-- +goose Down
DROP TABLE escalation_digests;
DROP TABLE escalation_outbox;
