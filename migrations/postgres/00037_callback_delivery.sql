-- +goose Up
-- A tenant's delivery status, for the admin page and `settle callback
-- show`: the last attempt (when, the status that came back, the reason it
-- failed) and the last success, with the failed attempts since then. One
-- row per tenant, updated with each attempt's record, so reading it never
-- scans the outbox. Setting a new endpoint starts it afresh.
ALTER TABLE tenant_callbacks
    ADD COLUMN last_attempt_at        timestamptz,
    ADD COLUMN last_attempt_status    int         NOT NULL DEFAULT 0,
    ADD COLUMN last_attempt_error     text        NOT NULL DEFAULT '',
    ADD COLUMN last_success_at        timestamptz,
    ADD COLUMN failures_since_success int         NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE tenant_callbacks
    DROP COLUMN last_attempt_at, DROP COLUMN last_attempt_status, DROP COLUMN last_attempt_error,
    DROP COLUMN last_success_at, DROP COLUMN failures_since_success;
