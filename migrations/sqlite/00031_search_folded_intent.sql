-- +goose Up
-- The console's search finds an intent reference pasted in another case
-- (ORDER-761727 for order-761727) when nothing carries it exactly:
-- ledger.Browser.Search's second look, one probe of this index per tenant.
-- SQLite's lower() folds ASCII letters only.
CREATE INDEX operation_ledger_intent_folded ON operation_ledger (tenant_id, lower(intent_ref));

-- +goose Down
DROP INDEX operation_ledger_intent_folded;
