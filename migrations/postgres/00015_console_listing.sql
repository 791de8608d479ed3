-- +goose NO TRANSACTION
-- +goose Up
-- The console's support views list operations newest first over a set of
-- tenants or all of them, by state, target and age, and count each state
-- for its tabs (ledger.Browser). Existing indexes all lead with tenant_id,
-- so a listing or count across every tenant read the whole table, and a
-- tenant's operations for one rare target walked its whole history.
--
-- Built CONCURRENTLY: on a table of ten million rows a plain build blocks
-- every create and claim for minutes. Each is dropped first, so a run that
-- failed part-way (leaving an invalid index behind) can simply be retried.
--
-- Every tenant, newest first; age windows across tenants.
DROP INDEX CONCURRENTLY IF EXISTS operation_ledger_created;
CREATE INDEX CONCURRENTLY operation_ledger_created ON operation_ledger (created_at, operation_id);
-- Every tenant in one state, and the state counts: partial like
-- operation_ledger_tenant_state (00009), so the 97% of rows that are
-- SUCCEEDED never enter it (their listing is served by the index above).
DROP INDEX CONCURRENTLY IF EXISTS operation_ledger_state_created;
CREATE INDEX CONCURRENTLY operation_ledger_state_created ON operation_ledger (state, created_at, operation_id)
    WHERE state <> 'SUCCEEDED';
-- A tenant's operations for one target, and every tenant's. (The auditor's
-- operation_ledger_audit holds only the final states.) A target of few rows
-- would otherwise be found by walking every newer row of the others.
DROP INDEX CONCURRENTLY IF EXISTS operation_ledger_tenant_target;
CREATE INDEX CONCURRENTLY operation_ledger_tenant_target ON operation_ledger (tenant_id, target, created_at, operation_id);
DROP INDEX CONCURRENTLY IF EXISTS operation_ledger_target_created;
CREATE INDEX CONCURRENTLY operation_ledger_target_created ON operation_ledger (target, created_at, operation_id);

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS operation_ledger_target_created;
DROP INDEX CONCURRENTLY IF EXISTS operation_ledger_tenant_target;
DROP INDEX CONCURRENTLY IF EXISTS operation_ledger_state_created;
DROP INDEX CONCURRENTLY IF EXISTS operation_ledger_created;
