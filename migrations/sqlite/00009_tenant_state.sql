-- +goose Up
-- Nothing for SQLite. PostgreSQL's 00009 adds a partial index for listing a
-- tenant's operations in one state; SQLite's planner cannot use an index for
-- List's `(?3 = '' OR state = ?3)`, so it would only slow every write. The
-- file keeps the two dialects' versions in step.

-- +goose Down
