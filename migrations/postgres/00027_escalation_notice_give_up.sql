-- +goose Up
-- An escalation notice the notifier stopped retrying after its bound on
-- attempts (settle serve --callback-max-attempts, the rule client callbacks
-- follow: 00026). It stays undelivered and visible (settle escalation
-- notices) until `settle escalation notices --retry` clears it; claims
-- never take it.
ALTER TABLE escalation_outbox ADD COLUMN gave_up_at timestamptz;
-- The given-up notices of a tenant, latest first, for show and retry.
CREATE INDEX escalation_outbox_gave_up ON escalation_outbox (tenant_id, gave_up_at)
    WHERE gave_up_at IS NOT NULL;

-- +goose Down
DROP INDEX escalation_outbox_gave_up;
ALTER TABLE escalation_outbox DROP COLUMN gave_up_at;
