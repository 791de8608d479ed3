-- +goose Up
-- See the PostgreSQL migration: the replay window starts at the first claim.
-- retry_window_micros is the window's length in microseconds.
ALTER TABLE operation_ledger ADD COLUMN first_claimed_at INTEGER;
ALTER TABLE operation_ledger ADD COLUMN retry_window_micros INTEGER NOT NULL DEFAULT 0;
-- Existing rows derive the length from their end; claimed ones keep that end.
UPDATE operation_ledger SET retry_window_micros = max(0, retry_window_end - created_at);

-- +goose Down
ALTER TABLE operation_ledger DROP COLUMN retry_window_micros;
ALTER TABLE operation_ledger DROP COLUMN first_claimed_at;
