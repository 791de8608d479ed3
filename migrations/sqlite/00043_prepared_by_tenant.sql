-- +goose Up
-- See the PostgreSQL migration: the claim walks the same index.
CREATE INDEX operation_ledger_prepared_tenant ON operation_ledger (tenant_id, created_at, operation_id)
    WHERE state = 'PREPARED';
DROP INDEX operation_ledger_claimable;

-- +goose Down
CREATE INDEX operation_ledger_claimable ON operation_ledger (created_at)
    WHERE state = 'PREPARED';
DROP INDEX operation_ledger_prepared_tenant;
