-- +goose Up
-- See the PostgreSQL migration: the results of `settle drill`. Times are
-- INTEGER microseconds (UTC); evidence is JSON text.
CREATE TABLE drill_results (
    run_id         TEXT    NOT NULL CHECK (run_id <> ''),
    target         TEXT    NOT NULL CHECK (target <> ''),
    test_number    INTEGER NOT NULL CHECK (test_number BETWEEN 1 AND 99),
    test_name      TEXT    NOT NULL CHECK (test_name <> ''),
    passed         INTEGER NOT NULL CHECK (passed IN (0, 1)),
    not_applicable INTEGER NOT NULL DEFAULT 0 CHECK (not_applicable IN (0, 1)),
    reason         TEXT    NOT NULL DEFAULT '',
    evidence       TEXT    NOT NULL DEFAULT '{}',
    ran_at         INTEGER NOT NULL,
    settle_version TEXT    NOT NULL DEFAULT '',
    PRIMARY KEY (run_id, test_number)
);
CREATE INDEX drill_results_target ON drill_results (target, ran_at DESC);

-- +goose Down
DROP TABLE drill_results;
