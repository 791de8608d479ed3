-- +goose NO TRANSACTION
-- +goose Up
-- The console's search finds an intent reference pasted in another case
-- (ORDER-761727 for order-761727) when nothing carries it exactly:
-- ledger.Browser.Search's second look, one probe of this index per tenant.
-- Built CONCURRENTLY, as 00015's, so that a large ledger keeps taking
-- creates and claims meanwhile; dropped first so a failed run can be
-- retried.
DROP INDEX CONCURRENTLY IF EXISTS operation_ledger_intent_folded;
CREATE INDEX CONCURRENTLY operation_ledger_intent_folded ON operation_ledger (tenant_id, lower(intent_ref));

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS operation_ledger_intent_folded;
