-- +goose Up
-- See the PostgreSQL migration.
ALTER TABLE api_tokens ADD COLUMN rate_per_second INTEGER CHECK (rate_per_second > 0);
ALTER TABLE api_tokens ADD COLUMN rate_burst INTEGER CHECK (rate_burst > 0);

-- +goose Down
ALTER TABLE api_tokens DROP COLUMN rate_burst;
ALTER TABLE api_tokens DROP COLUMN rate_per_second;
