-- +goose Up
-- The tenants settle knows. A token, callback or parameter is only ever
-- made for one of them, so a typo ("acmee") is refused instead of becoming
-- a working token for a tenant nobody meant; creating a tenant is its own
-- recorded action (tenant.create). Existing tenants are those that
-- already hold anything.
CREATE TABLE tenants (
    tenant_id  text        PRIMARY KEY,
    created_at timestamptz NOT NULL
);
INSERT INTO tenants (tenant_id, created_at)
SELECT tenant_id, min(at) FROM (
    SELECT tenant_id, created_at AS at FROM api_tokens
    UNION ALL SELECT tenant_id, created_at FROM tenant_callbacks
    UNION ALL SELECT tenant_id, updated_at FROM tenant_params
    UNION ALL SELECT tenant_id, min(created_at) FROM operation_ledger GROUP BY tenant_id
) known GROUP BY tenant_id;

-- A token's name says what it is for ("billing service, production");
-- older tokens get one that says it was never given. last_used_at is
-- written at most once a minute per token (ledger.TouchEvery), not on
-- every request.
ALTER TABLE api_tokens ADD COLUMN name text NOT NULL DEFAULT 'unnamed (created before names)'
        CHECK (char_length(name) BETWEEN 1 AND 80),
    ADD COLUMN last_used_at timestamptz;
ALTER TABLE api_tokens ALTER COLUMN name DROP DEFAULT;

-- When a delivery was last tried, for the admin page's delivery status.
ALTER TABLE callback_outbox ADD COLUMN last_attempt_at timestamptz;

-- The kinds of action grow with every feature; ledger.ActionKind names
-- them and the stores write only those. A CHECK listing them made each new
-- kind a table rebuild in SQLite (00020, 00028) and a conflict between
-- branches adding kinds at once: the list is the Go code's now.
ALTER TABLE actions DROP CONSTRAINT actions_kind_check;

-- +goose Down
ALTER TABLE actions ADD CONSTRAINT actions_kind_check CHECK (kind IN ('resolution.propose', 'resolution.approve',
        'resolution.reject', 'quarantine.resolve', 'token.create', 'token.revoke',
        'callback.set', 'callback.remove', 'quarantine.link', 'finding.acknowledge',
        'tenant_param.set', 'tenant_param.unset',
        'callback.retry', 'escalation_notice.retry')) NOT VALID;
ALTER TABLE callback_outbox DROP COLUMN last_attempt_at;
ALTER TABLE api_tokens DROP COLUMN last_used_at, DROP COLUMN name;
DROP TABLE tenants;
