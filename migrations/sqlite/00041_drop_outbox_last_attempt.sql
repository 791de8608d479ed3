-- +goose Up
-- See the PostgreSQL migration: nothing ever wrote this column.
ALTER TABLE callback_outbox DROP COLUMN last_attempt_at;

-- +goose Down
ALTER TABLE callback_outbox ADD COLUMN last_attempt_at INTEGER;
