-- +goose Up
-- 00034 added callback_outbox.last_attempt_at for the admin page's delivery
-- status; 00037 keeps that status on tenant_callbacks instead, and nothing
-- ever wrote this column.
ALTER TABLE callback_outbox DROP COLUMN last_attempt_at;

-- +goose Down
ALTER TABLE callback_outbox ADD COLUMN last_attempt_at timestamptz;
