-- +goose NO TRANSACTION
-- +goose Up
-- The console's state tabs for a target (ledger.Browser's counts, each
-- state up to ledger.CountCap rows, newest first). At a million operations
-- a common target's tabs took 165 ms: the SUCCEEDED count walked the
-- target's index and read 10,000 heap rows for their state, and each rare
-- state walked every tenant's rows in that state for the target's
-- (docs/performance.md, "The console at scale").
--
-- The rare states of one target, newest first: partial like
-- operation_ledger_state_created, so SUCCEEDED rows never stay in it.
DROP INDEX CONCURRENTLY IF EXISTS operation_ledger_target_state;
CREATE INDEX CONCURRENTLY operation_ledger_target_state ON operation_ledger (target, state, created_at, operation_id)
    WHERE state <> 'SUCCEEDED';
-- The common state: the target's indexes carry the state, so its count
-- reads the index alone (an index-only scan where the page is all-visible)
-- rather than a heap row per entry. The keys are unchanged; a listing
-- reads them as before.
DROP INDEX CONCURRENTLY IF EXISTS operation_ledger_target_created;
CREATE INDEX CONCURRENTLY operation_ledger_target_created ON operation_ledger (target, created_at, operation_id)
    INCLUDE (state);
DROP INDEX CONCURRENTLY IF EXISTS operation_ledger_tenant_target;
CREATE INDEX CONCURRENTLY operation_ledger_tenant_target ON operation_ledger (tenant_id, target, created_at, operation_id)
    INCLUDE (state);

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS operation_ledger_tenant_target;
CREATE INDEX CONCURRENTLY operation_ledger_tenant_target ON operation_ledger (tenant_id, target, created_at, operation_id);
DROP INDEX CONCURRENTLY IF EXISTS operation_ledger_target_created;
CREATE INDEX CONCURRENTLY operation_ledger_target_created ON operation_ledger (target, created_at, operation_id);
DROP INDEX CONCURRENTLY IF EXISTS operation_ledger_target_state;
