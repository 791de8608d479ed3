-- +goose Up
-- See the PostgreSQL migration: a target's rare states, newest first, for
-- the console's state tabs. (SQLite has no INCLUDE; its target indexes are
-- unchanged, and the common state's count reads its rows by rowid.)
CREATE INDEX operation_ledger_target_state ON operation_ledger (target, state, created_at, operation_id)
    WHERE state <> 'SUCCEEDED';

-- +goose Down
DROP INDEX operation_ledger_target_state;
