-- +goose Up
-- One lease per cluster-wide duty (the auditor's walk, retention, digests):
-- the replica named by holder does the duty until expires_at unless it
-- renews. A row whose lease has expired is free for any replica to take.
-- Times come from settle's clock (as every lease in the ledger), not the
-- database's now().
CREATE TABLE leader (
    name       text        PRIMARY KEY CHECK (char_length(name) BETWEEN 1 AND 100),
    holder     text        NOT NULL CHECK (char_length(holder) BETWEEN 1 AND 200),
    elected_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL
);

-- +goose Down
DROP TABLE leader;
