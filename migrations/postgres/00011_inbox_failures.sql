-- +goose Up
-- A delivery's failed processing attempts and the last one's error. Each
-- claim counts one; a deliberate deferral gives it back, so that what
-- counts are attempts that errored or whose processor died or hung. Past
-- the processor's maximum the delivery is quarantined with the error.
ALTER TABLE webhook_inbox ADD COLUMN failed_attempts int NOT NULL DEFAULT 0;
ALTER TABLE webhook_inbox ADD COLUMN last_error text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE webhook_inbox DROP COLUMN last_error;
ALTER TABLE webhook_inbox DROP COLUMN failed_attempts;
