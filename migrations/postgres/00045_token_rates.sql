-- +goose Up
-- Each API token's own rate: requests a second and burst. NULL is the
-- replica's default (settle serve --rate-limit, --rate-burst).
ALTER TABLE api_tokens ADD COLUMN rate_per_second integer CHECK (rate_per_second > 0),
    ADD COLUMN rate_burst integer CHECK (rate_burst > 0);

-- +goose Down
ALTER TABLE api_tokens DROP COLUMN rate_burst, DROP COLUMN rate_per_second;
