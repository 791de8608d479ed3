-- +goose NO TRANSACTION
-- +goose Up
-- Retention and erasure (ledger.RetentionPolicy, ledger.TenantEraser).
--
-- The event log and the record of human actions stay append-only for
-- everything but a deletion made by retention or a tenant's erasure: those
-- set settle.retention to 'on' for their own transaction only
-- (set_config(…, true)), so no other statement, session or tool can delete
-- a row, and nothing at all can change one.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION operation_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' AND current_setting('settle.retention', true) = 'on' THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'operation_events is append-only';
END;
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION actions_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' AND current_setting('settle.retention', true) = 'on' THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'actions is append-only';
END;
$$;
-- +goose StatementEnd

-- What remains of an erased tenant: that it was erased, when, by whom,
-- whether it was forced past operations not yet final, and how many rows of
-- each kind went. Nothing erased (no reference, payload or name of the
-- tenant's customers) is kept.
CREATE TABLE IF NOT EXISTS tenant_erasures (
    erasure_id  bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id   text        NOT NULL,
    at          timestamptz NOT NULL,
    subject     text        NOT NULL CHECK (subject <> ''),
    actor_name  text        NOT NULL DEFAULT '',
    role        text        NOT NULL DEFAULT '',
    forced      boolean     NOT NULL,
    unfinished  int         NOT NULL DEFAULT 0,
    counts      jsonb       NOT NULL
);
CREATE INDEX IF NOT EXISTS tenant_erasures_tenant ON tenant_erasures (tenant_id, erasure_id);

-- Retention walks final operations by the time they settled (updated_at,
-- which nothing changes once an operation is final). Deletion reads every
-- final row; redaction only those that still carry a payload, so that rows
-- already redacted leave its index and a pass never walks them again.
-- Built CONCURRENTLY (see 00015): a plain build blocks creates and claims.
DROP INDEX CONCURRENTLY IF EXISTS operation_ledger_final_updated;
CREATE INDEX CONCURRENTLY operation_ledger_final_updated ON operation_ledger (updated_at)
    WHERE state IN ('SUCCEEDED', 'FAILED_TERMINAL');
DROP INDEX CONCURRENTLY IF EXISTS operation_ledger_redactable;
CREATE INDEX CONCURRENTLY operation_ledger_redactable ON operation_ledger (updated_at)
    WHERE state IN ('SUCCEEDED', 'FAILED_TERMINAL') AND octet_length(payload) > 0;
-- The purge of processed deliveries (one per webhook event ever received)
-- and of reviewed quarantine items, oldest first.
DROP INDEX CONCURRENTLY IF EXISTS webhook_inbox_processed;
CREATE INDEX CONCURRENTLY webhook_inbox_processed ON webhook_inbox (processed_at)
    WHERE processed_at IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS quarantine_resolved;
CREATE INDEX CONCURRENTLY quarantine_resolved ON quarantine (resolved_at)
    WHERE resolved_at IS NOT NULL;
-- Whether a delivery is still named by an open quarantine item.
DROP INDEX CONCURRENTLY IF EXISTS quarantine_delivery;
CREATE INDEX CONCURRENTLY quarantine_delivery ON quarantine (delivery_id)
    WHERE delivery_id IS NOT NULL;

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS quarantine_delivery;
DROP INDEX CONCURRENTLY IF EXISTS quarantine_resolved;
DROP INDEX CONCURRENTLY IF EXISTS webhook_inbox_processed;
DROP INDEX CONCURRENTLY IF EXISTS operation_ledger_redactable;
DROP INDEX CONCURRENTLY IF EXISTS operation_ledger_final_updated;
DROP TABLE IF EXISTS tenant_erasures;
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION actions_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'actions is append-only';
END;
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION operation_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'operation_events is append-only';
END;
$$;
-- +goose StatementEnd
