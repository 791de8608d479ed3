-- +goose Up
-- A tenant's operations in one state, newest first: the API's ?state=, the
-- escalation list and the figures' open escalations. Without it such a
-- listing walked the tenant's whole history for the few rows in a rare
-- state (2 s a page at 1 million operations). Partial like the hot-path
-- indexes: SUCCEEDED, 97% of rows and found at once by
-- operation_ledger_tenant_created, never enters it. No operation_id: with
-- it, the planner took this index over the primary key for the UPDATEs
-- that name one operation and its state (Approve; TestPlans).
CREATE INDEX operation_ledger_tenant_state ON operation_ledger (tenant_id, state, created_at)
    WHERE state <> 'SUCCEEDED';

-- +goose Down
DROP INDEX operation_ledger_tenant_state;
