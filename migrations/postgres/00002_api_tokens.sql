-- +goose Up
CREATE TABLE api_tokens (
    token_id   text        PRIMARY KEY,          -- public id, for listing and revoking
    tenant_id  text        NOT NULL,
    token_hash bytea       NOT NULL UNIQUE,      -- SHA-256 of the secret token
    created_at timestamptz NOT NULL,
    revoked_at timestamptz
);

-- Keyset pagination of a tenant's operations, newest first.
CREATE INDEX operation_ledger_tenant_created ON operation_ledger (tenant_id, created_at, operation_id);

-- +goose Down
DROP INDEX operation_ledger_tenant_created;
DROP TABLE api_tokens;
