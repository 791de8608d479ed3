-- +goose Up
-- See the PostgreSQL migration; SQLite's lease keeps its own statement,
-- and the index keeps the two schemas alike (the parity test).
CREATE INDEX operation_ledger_unknown_tenant ON operation_ledger (tenant_id, next_reconcile_at, operation_id)
    WHERE state = 'UNKNOWN';

-- +goose Down
DROP INDEX operation_ledger_unknown_tenant;
