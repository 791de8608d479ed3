-- +goose Up
-- See the PostgreSQL migration. Times are INTEGER microseconds (UTC).
CREATE TABLE tenant_callbacks (
    tenant_id  TEXT    PRIMARY KEY,
    url        TEXT    NOT NULL,
    secret     BLOB    NOT NULL CHECK (length(secret) >= 32),
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);

CREATE TABLE callback_outbox (
    callback_id     INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id       TEXT    NOT NULL,
    operation_id    TEXT    NOT NULL,
    state           TEXT    NOT NULL,
    fence_token     INTEGER NOT NULL,
    created_at      INTEGER NOT NULL,
    next_attempt_at INTEGER NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    delivered_at    INTEGER,
    last_status     INTEGER,
    last_error      TEXT    NOT NULL DEFAULT '',
    UNIQUE (tenant_id, operation_id, state),
    FOREIGN KEY (tenant_id, operation_id) REFERENCES operation_ledger (tenant_id, operation_id)
);
CREATE INDEX callback_outbox_due ON callback_outbox (tenant_id, next_attempt_at)
    WHERE delivered_at IS NULL;

-- +goose Down
DROP TABLE callback_outbox;
DROP TABLE tenant_callbacks;
