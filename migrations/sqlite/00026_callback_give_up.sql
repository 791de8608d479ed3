-- +goose Up
-- See the PostgreSQL migration. Times are INTEGER microseconds (UTC).
ALTER TABLE callback_outbox ADD COLUMN gave_up_at INTEGER;
CREATE INDEX callback_outbox_gave_up ON callback_outbox (tenant_id, gave_up_at)
    WHERE gave_up_at IS NOT NULL;

-- +goose Down
DROP INDEX callback_outbox_gave_up;
ALTER TABLE callback_outbox DROP COLUMN gave_up_at;
