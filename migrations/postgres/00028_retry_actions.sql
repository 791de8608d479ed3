-- +goose Up
-- Queuing given-up deliveries again is a recorded action: `settle callback
-- retry`, the console's retry button and `settle escalation notices
-- --retry` (the retry of migrations 00026 and 00027).
ALTER TABLE actions DROP CONSTRAINT actions_kind_check,
    ADD CONSTRAINT actions_kind_check CHECK (kind IN ('resolution.propose', 'resolution.approve',
        'resolution.reject', 'quarantine.resolve', 'token.create', 'token.revoke',
        'callback.set', 'callback.remove', 'quarantine.link', 'finding.acknowledge',
        'tenant_param.set', 'tenant_param.unset',
        'callback.retry', 'escalation_notice.retry'));

-- +goose Down
-- The record is append-only: recorded retries stay, and only new rows are
-- held to the older list (NOT VALID skips the existing ones).
ALTER TABLE actions DROP CONSTRAINT actions_kind_check,
    ADD CONSTRAINT actions_kind_check CHECK (kind IN ('resolution.propose', 'resolution.approve',
        'resolution.reject', 'quarantine.resolve', 'token.create', 'token.revoke',
        'callback.set', 'callback.remove', 'quarantine.link', 'finding.acknowledge',
        'tenant_param.set', 'tenant_param.unset')) NOT VALID;
