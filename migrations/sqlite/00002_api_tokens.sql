-- +goose Up
CREATE TABLE api_tokens (
    token_id   TEXT    PRIMARY KEY,
    tenant_id  TEXT    NOT NULL,
    token_hash BLOB    NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
);

CREATE INDEX operation_ledger_tenant_created ON operation_ledger (tenant_id, created_at, operation_id);

-- +goose Down
DROP INDEX operation_ledger_tenant_created;
DROP TABLE api_tokens;
