-- +goose Up
-- See the PostgreSQL migration: one lease per cluster-wide duty. Times are
-- INTEGER microseconds (UTC).
CREATE TABLE leader (
    name       TEXT    PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 100),
    holder     TEXT    NOT NULL CHECK (length(holder) BETWEEN 1 AND 200),
    elected_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);

-- +goose Down
DROP TABLE leader;
