-- +goose Up
CREATE TABLE operation_ledger (
    tenant_id         text        NOT NULL,
    operation_id      uuid        NOT NULL,
    operation_type    text        NOT NULL,
    intent_ref        text        NOT NULL,
    target            text        NOT NULL,
    payload           bytea       NOT NULL,  -- RFC 8785 canonical approved payload
    payload_hash      bytea       NOT NULL CHECK (length(payload_hash) = 32),
    remote_key        uuid        NOT NULL,
    state             text        NOT NULL CHECK (state IN
                          ('PREPARED','IN_FLIGHT','SUCCEEDED','FAILED_TERMINAL','UNKNOWN','ESCALATED')),
    fence_token       bigint      NOT NULL DEFAULT 0,
    attempt_count     int         NOT NULL DEFAULT 0,
    lease_expires_at  timestamptz,
    remote_ref        text,
    retry_window_end  timestamptz NOT NULL,
    deadline          timestamptz,
    next_reconcile_at timestamptz,
    reason            text        NOT NULL DEFAULT '',
    created_at        timestamptz NOT NULL,
    updated_at        timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, operation_id),
    UNIQUE (tenant_id, operation_type, intent_ref),
    -- Invariant 4: SUCCEEDED only with the target's confirmed reference.
    CHECK (state <> 'SUCCEEDED' OR remote_ref IS NOT NULL)
);

-- Webhooks and lookups name our reference without a tenant.
CREATE UNIQUE INDEX operation_ledger_remote_key ON operation_ledger (remote_key);
-- Support search by intent reference and by the target's object id.
CREATE INDEX operation_ledger_intent ON operation_ledger (tenant_id, intent_ref);
CREATE INDEX operation_ledger_remote_ref ON operation_ledger (tenant_id, remote_ref)
    WHERE remote_ref IS NOT NULL;
-- Small partial indexes for the hot paths; rows leave them as they settle.
CREATE INDEX operation_ledger_claimable ON operation_ledger (created_at)
    WHERE state = 'PREPARED';
CREATE INDEX operation_ledger_leased ON operation_ledger (lease_expires_at)
    WHERE state = 'IN_FLIGHT';
CREATE INDEX operation_ledger_unknown ON operation_ledger (next_reconcile_at)
    WHERE state = 'UNKNOWN';

CREATE TABLE operation_events (
    event_id     bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id    text        NOT NULL,
    operation_id uuid        NOT NULL,
    from_state   text,
    to_state     text        NOT NULL,
    fence_token  bigint      NOT NULL,
    actor        text        NOT NULL,
    reason       text        NOT NULL DEFAULT '',
    evidence     jsonb       NOT NULL DEFAULT '{}',
    at           timestamptz NOT NULL,
    FOREIGN KEY (tenant_id, operation_id) REFERENCES operation_ledger (tenant_id, operation_id)
);
CREATE INDEX operation_events_operation ON operation_events (tenant_id, operation_id, event_id);

-- The event log is append-only.
-- +goose StatementBegin
CREATE FUNCTION operation_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'operation_events is append-only';
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER operation_events_append_only BEFORE UPDATE OR DELETE ON operation_events
    FOR EACH ROW EXECUTE FUNCTION operation_events_append_only();

CREATE TABLE payload_conflicts (
    conflict_id    bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id      text        NOT NULL,
    operation_id   uuid        NOT NULL,
    operation_type text        NOT NULL,
    intent_ref     text        NOT NULL,
    stored_hash    bytea       NOT NULL,
    rejected_hash  bytea       NOT NULL,
    at             timestamptz NOT NULL
);
CREATE INDEX payload_conflicts_tenant ON payload_conflicts (tenant_id, at);

-- +goose Down
DROP TABLE payload_conflicts;
DROP TABLE operation_events;
DROP FUNCTION operation_events_append_only();
DROP TABLE operation_ledger;
