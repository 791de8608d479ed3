-- +goose Up
-- A tenant's named request parameters: the values a target contract puts
-- into the tenant's requests through {tenant.NAME} templates (the connected
-- account a platform acts for, say). Not secrets; never logged. The rules
-- live in ledger (ValidateTenantParams, SetTenantParamsIn); the checks here
-- hold whatever writes the table to the same shape.
CREATE TABLE tenant_params (
    tenant_id  text        NOT NULL,
    name       text        NOT NULL CHECK (name ~ '^[a-z][a-z0-9_]{0,31}$'),
    value      text        NOT NULL CHECK (char_length(value) BETWEEN 1 AND 256
                               AND value !~ '[[:cntrl:]]' AND value = btrim(value, ' ')),
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, name)
);

-- Each parameter changed is a recorded action (naming it, never its value).
ALTER TABLE actions DROP CONSTRAINT actions_kind_check,
    ADD CONSTRAINT actions_kind_check CHECK (kind IN ('resolution.propose', 'resolution.approve',
        'resolution.reject', 'quarantine.resolve', 'token.create', 'token.revoke',
        'callback.set', 'callback.remove', 'quarantine.link', 'finding.acknowledge',
        'tenant_param.set', 'tenant_param.unset'));

-- +goose Down
-- The record is append-only: recorded parameter actions stay, and only new
-- rows are held to the older list (NOT VALID skips the existing ones).
ALTER TABLE actions DROP CONSTRAINT actions_kind_check,
    ADD CONSTRAINT actions_kind_check CHECK (kind IN ('resolution.propose', 'resolution.approve',
        'resolution.reject', 'quarantine.resolve', 'token.create', 'token.revoke',
        'callback.set', 'callback.remove', 'quarantine.link', 'finding.acknowledge')) NOT VALID;
DROP TABLE tenant_params;
