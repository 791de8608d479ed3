-- +goose Up
-- Console sessions. The browser holds a random session id; only its
-- SHA-256 is stored, so a copy of this table signs nobody in. Keeping
-- sessions here (not in the cookie) is what lets sign-out and revocation
-- end a session at once on every replica.
CREATE TABLE console_sessions (
    session_hash    bytea       PRIMARY KEY CHECK (length(session_hash) = 32),
    subject         text        NOT NULL,
    name            text        NOT NULL DEFAULT '',
    email           text        NOT NULL DEFAULT '',
    -- The role claim's values at sign-in; roles are resolved from them at
    -- every request.
    claims          text[]      NOT NULL DEFAULT '{}',
    created_at      timestamptz NOT NULL,
    last_seen_at    timestamptz NOT NULL,
    idle_expires_at timestamptz NOT NULL,
    expires_at      timestamptz NOT NULL
);
-- Revoking a person's sessions.
CREATE INDEX console_sessions_subject ON console_sessions (subject);
-- Removing expired rows.
CREATE INDEX console_sessions_expires ON console_sessions (expires_at);

-- +goose Down
DROP TABLE console_sessions;
