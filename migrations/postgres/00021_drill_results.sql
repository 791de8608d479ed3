-- +goose Up
-- The results of `settle drill`: one row per fault-injection test of one
-- run against one target. The go/no-go gate reads the newest run of each
-- target. Evidence holds states, counts and remote ids, never a payload.
CREATE TABLE drill_results (
    run_id         text        NOT NULL CHECK (run_id <> ''),
    target         text        NOT NULL CHECK (target <> ''),
    test_number    integer     NOT NULL CHECK (test_number BETWEEN 1 AND 99),
    test_name      text        NOT NULL CHECK (test_name <> ''),
    passed         boolean     NOT NULL,
    not_applicable boolean     NOT NULL DEFAULT false,
    reason         text        NOT NULL DEFAULT '',
    evidence       jsonb       NOT NULL DEFAULT '{}',
    ran_at         timestamptz NOT NULL,
    settle_version text        NOT NULL DEFAULT '',
    PRIMARY KEY (run_id, test_number)
);
CREATE INDEX drill_results_target ON drill_results (target, ran_at DESC);

-- +goose Down
DROP TABLE drill_results;
