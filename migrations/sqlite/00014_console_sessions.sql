-- +goose Up
-- See the PostgreSQL migration. Times are INTEGER microseconds (UTC);
-- claims are a JSON array of strings.
CREATE TABLE console_sessions (
    session_hash    BLOB    PRIMARY KEY CHECK (length(session_hash) = 32),
    subject         TEXT    NOT NULL,
    name            TEXT    NOT NULL DEFAULT '',
    email           TEXT    NOT NULL DEFAULT '',
    claims          TEXT    NOT NULL DEFAULT '[]',
    created_at      INTEGER NOT NULL,
    last_seen_at    INTEGER NOT NULL,
    idle_expires_at INTEGER NOT NULL,
    expires_at      INTEGER NOT NULL
);
CREATE INDEX console_sessions_subject ON console_sessions (subject);
CREATE INDEX console_sessions_expires ON console_sessions (expires_at);

-- +goose Down
DROP TABLE console_sessions;
