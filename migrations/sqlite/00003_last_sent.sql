-- +goose Up
ALTER TABLE operation_ledger ADD COLUMN last_sent_at INTEGER;

-- +goose Down
ALTER TABLE operation_ledger DROP COLUMN last_sent_at;
