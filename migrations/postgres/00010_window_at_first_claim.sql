-- +goose Up
-- The same-key replay window starts when the operation is first claimed for
-- sending, not when it is created: an operation that waited behind slow
-- sends still reaches the target with its whole window ahead of it. A claim
-- precedes the send, so the ledger's window still ends no later than the
-- target's. retry_window_micros is the window's length, stored at creation
-- so that the claim can compute the end; first_claimed_at is the moment.
ALTER TABLE operation_ledger ADD COLUMN first_claimed_at timestamptz;
ALTER TABLE operation_ledger ADD COLUMN retry_window_micros bigint NOT NULL DEFAULT 0
    CHECK (retry_window_micros >= 0);
-- Existing rows derive the length from their end. Those already claimed keep
-- that end (counted from creation, the safe side) and first_claimed_at stays
-- NULL, since their window was not counted from a claim; those still
-- PREPARED get their end at their first claim, like new ones.
UPDATE operation_ledger
   SET retry_window_micros = greatest(0, (extract(epoch FROM retry_window_end - created_at) * 1000000)::bigint);

-- +goose Down
ALTER TABLE operation_ledger DROP COLUMN retry_window_micros;
ALTER TABLE operation_ledger DROP COLUMN first_claimed_at;
