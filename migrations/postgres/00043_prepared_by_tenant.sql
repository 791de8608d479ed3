-- +goose Up
-- ClaimBatch is fair across tenants: it walks the tenants that have
-- PREPARED operations (one probe each) and reads each one's oldest from
-- this index, so one tenant's burst of 100,000 no longer delays the
-- others. It replaces the first-in-first-out claim's index.
CREATE INDEX operation_ledger_prepared_tenant ON operation_ledger (tenant_id, created_at, operation_id)
    WHERE state = 'PREPARED';
DROP INDEX operation_ledger_claimable;

-- +goose Down
CREATE INDEX operation_ledger_claimable ON operation_ledger (created_at)
    WHERE state = 'PREPARED';
DROP INDEX operation_ledger_prepared_tenant;
