-- +goose Up
-- The console's support views list operations newest first over a set of
-- tenants or all of them, by state, target and age, and count each state
-- (ledger.Browser); the same indexes as PostgreSQL's 00015. The statements
-- name a state as a literal, so SQLite, which cannot see through a bound
-- parameter, can prove the partial indexes' WHERE.
--
-- Every tenant, newest first; age windows across tenants.
CREATE INDEX operation_ledger_created ON operation_ledger (created_at, operation_id);
-- Every tenant in one state, and the state counts; SUCCEEDED, most rows,
-- is served by the index above.
CREATE INDEX operation_ledger_state_created ON operation_ledger (state, created_at, operation_id)
    WHERE state <> 'SUCCEEDED';
-- A tenant's operations in one state: PostgreSQL's 00009, which SQLite
-- skipped while List could not use it.
CREATE INDEX operation_ledger_tenant_state ON operation_ledger (tenant_id, state, created_at)
    WHERE state <> 'SUCCEEDED';
-- A tenant's operations for one target, and every tenant's (the auditor's
-- operation_ledger_audit holds only the final states).
CREATE INDEX operation_ledger_tenant_target ON operation_ledger (tenant_id, target, created_at, operation_id);
CREATE INDEX operation_ledger_target_created ON operation_ledger (target, created_at, operation_id);

-- +goose Down
DROP INDEX operation_ledger_target_created;
DROP INDEX operation_ledger_tenant_target;
DROP INDEX operation_ledger_tenant_state;
DROP INDEX operation_ledger_state_created;
DROP INDEX operation_ledger_created;
