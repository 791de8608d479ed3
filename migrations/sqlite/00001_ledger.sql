-- +goose Up
-- Times are stored as INTEGER microseconds since the Unix epoch (UTC) so that
-- comparisons and ordering are numeric.
CREATE TABLE operation_ledger (
    tenant_id         TEXT    NOT NULL,
    operation_id      TEXT    NOT NULL,
    operation_type    TEXT    NOT NULL,
    intent_ref        TEXT    NOT NULL,
    target            TEXT    NOT NULL,
    payload           BLOB    NOT NULL,
    payload_hash      BLOB    NOT NULL CHECK (length(payload_hash) = 32),
    remote_key        TEXT    NOT NULL,
    state             TEXT    NOT NULL CHECK (state IN
                          ('PREPARED','IN_FLIGHT','SUCCEEDED','FAILED_TERMINAL','UNKNOWN','ESCALATED')),
    fence_token       INTEGER NOT NULL DEFAULT 0,
    attempt_count     INTEGER NOT NULL DEFAULT 0,
    lease_expires_at  INTEGER,
    remote_ref        TEXT,
    retry_window_end  INTEGER NOT NULL,
    deadline          INTEGER,
    next_reconcile_at INTEGER,
    reason            TEXT    NOT NULL DEFAULT '',
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, operation_id),
    UNIQUE (tenant_id, operation_type, intent_ref),
    CHECK (state <> 'SUCCEEDED' OR remote_ref IS NOT NULL)
) WITHOUT ROWID;

CREATE UNIQUE INDEX operation_ledger_remote_key ON operation_ledger (remote_key);
CREATE INDEX operation_ledger_intent ON operation_ledger (tenant_id, intent_ref);
CREATE INDEX operation_ledger_remote_ref ON operation_ledger (tenant_id, remote_ref)
    WHERE remote_ref IS NOT NULL;
CREATE INDEX operation_ledger_claimable ON operation_ledger (created_at)
    WHERE state = 'PREPARED';
CREATE INDEX operation_ledger_leased ON operation_ledger (lease_expires_at)
    WHERE state = 'IN_FLIGHT';
CREATE INDEX operation_ledger_unknown ON operation_ledger (next_reconcile_at)
    WHERE state = 'UNKNOWN';

CREATE TABLE operation_events (
    event_id     INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id    TEXT    NOT NULL,
    operation_id TEXT    NOT NULL,
    from_state   TEXT,
    to_state     TEXT    NOT NULL,
    fence_token  INTEGER NOT NULL,
    actor        TEXT    NOT NULL,
    reason       TEXT    NOT NULL DEFAULT '',
    evidence     TEXT    NOT NULL DEFAULT '{}',
    at           INTEGER NOT NULL,
    FOREIGN KEY (tenant_id, operation_id) REFERENCES operation_ledger (tenant_id, operation_id)
);
CREATE INDEX operation_events_operation ON operation_events (tenant_id, operation_id, event_id);

-- +goose StatementBegin
CREATE TRIGGER operation_events_no_update BEFORE UPDATE ON operation_events
BEGIN
    SELECT RAISE(ABORT, 'operation_events is append-only');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER operation_events_no_delete BEFORE DELETE ON operation_events
BEGIN
    SELECT RAISE(ABORT, 'operation_events is append-only');
END;
-- +goose StatementEnd

CREATE TABLE payload_conflicts (
    conflict_id    INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id      TEXT    NOT NULL,
    operation_id   TEXT    NOT NULL,
    operation_type TEXT    NOT NULL,
    intent_ref     TEXT    NOT NULL,
    stored_hash    BLOB    NOT NULL,
    rejected_hash  BLOB    NOT NULL,
    at             INTEGER NOT NULL
);
CREATE INDEX payload_conflicts_tenant ON payload_conflicts (tenant_id, at);

-- +goose Down
DROP TABLE payload_conflicts;
DROP TRIGGER operation_events_no_delete;
DROP TRIGGER operation_events_no_update;
DROP TABLE operation_events;
DROP TABLE operation_ledger;
