-- +goose Up
CREATE TABLE webhook_inbox (
    delivery_id     INTEGER PRIMARY KEY AUTOINCREMENT,
    target          TEXT    NOT NULL,
    body_sha256     BLOB    NOT NULL,
    body            BLOB,
    received_at     INTEGER NOT NULL,
    next_attempt_at INTEGER,
    attempts        INTEGER NOT NULL DEFAULT 0,
    processed_at    INTEGER,
    outcome         TEXT    NOT NULL DEFAULT '',
    UNIQUE (target, body_sha256)
);
CREATE INDEX webhook_inbox_due ON webhook_inbox (next_attempt_at) WHERE processed_at IS NULL;

CREATE TABLE quarantine (
    quarantine_id     INTEGER PRIMARY KEY AUTOINCREMENT,
    target            TEXT    NOT NULL,
    delivery_id       INTEGER,
    reason            TEXT    NOT NULL,
    event_id          TEXT    NOT NULL DEFAULT '',
    claimed_reference TEXT    NOT NULL DEFAULT '',
    claimed_tenant    TEXT    NOT NULL DEFAULT '',
    remote_id         TEXT    NOT NULL DEFAULT '',
    operation_id      TEXT    NOT NULL DEFAULT '',
    operation_tenant  TEXT    NOT NULL DEFAULT '',
    quarantined_at    INTEGER NOT NULL,
    resolved_at       INTEGER,
    resolved_by       TEXT    NOT NULL DEFAULT '',
    resolution        TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX quarantine_open ON quarantine (quarantined_at) WHERE resolved_at IS NULL;

-- +goose Down
DROP TABLE quarantine;
DROP TABLE webhook_inbox;
