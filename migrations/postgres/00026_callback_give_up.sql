-- +goose Up
-- A notification the notifier stopped retrying after its bound on attempts
-- (settle serve --callback-max-attempts). It stays undelivered and visible
-- (settle callback show, the console) until `settle callback retry` clears
-- it; claims never take it. It stays in callback_outbox_due (undelivered),
-- which claims filter: given-up rows are few, and RemoveCallback's delete
-- of the undelivered keeps using that index.
ALTER TABLE callback_outbox ADD COLUMN gave_up_at timestamptz;
-- The given-up rows of a tenant, latest first, for show and retry.
CREATE INDEX callback_outbox_gave_up ON callback_outbox (tenant_id, gave_up_at)
    WHERE gave_up_at IS NOT NULL;

-- +goose Down
DROP INDEX callback_outbox_gave_up;
ALTER TABLE callback_outbox DROP COLUMN gave_up_at;
