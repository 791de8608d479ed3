-- +goose Up
-- See the PostgreSQL migration. Times are INTEGER microseconds (UTC).
ALTER TABLE tenant_callbacks ADD COLUMN last_attempt_at INTEGER;
ALTER TABLE tenant_callbacks ADD COLUMN last_attempt_status INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tenant_callbacks ADD COLUMN last_attempt_error TEXT NOT NULL DEFAULT '';
ALTER TABLE tenant_callbacks ADD COLUMN last_success_at INTEGER;
ALTER TABLE tenant_callbacks ADD COLUMN failures_since_success INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE tenant_callbacks DROP COLUMN failures_since_success;
ALTER TABLE tenant_callbacks DROP COLUMN last_success_at;
ALTER TABLE tenant_callbacks DROP COLUMN last_attempt_error;
ALTER TABLE tenant_callbacks DROP COLUMN last_attempt_status;
ALTER TABLE tenant_callbacks DROP COLUMN last_attempt_at;
