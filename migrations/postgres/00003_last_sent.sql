-- +goose Up
-- When settle last sent, or may have sent, the request: the claim, or a
-- reconciler's same-key replay. The absence rules count from it.
ALTER TABLE operation_ledger ADD COLUMN last_sent_at timestamptz;

-- +goose Down
ALTER TABLE operation_ledger DROP COLUMN last_sent_at;
