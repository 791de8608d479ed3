-- name: DrillInsert :exec
INSERT INTO drill_results (run_id, target, test_number, test_name, passed,
    not_applicable, reason, evidence, ran_at, settle_version)
VALUES (@run_id, @target, @test_number, @test_name, @passed,
    @not_applicable, @reason, @evidence, @ran_at, @settle_version);

-- name: DrillLatest :many
-- The results of the target's newest run, by test number.
SELECT run_id, target, test_number, test_name, passed, not_applicable,
    reason, evidence, ran_at, settle_version
  FROM drill_results
 WHERE run_id = (SELECT d.run_id FROM drill_results AS d WHERE d.target = @target
                  ORDER BY d.ran_at DESC, d.run_id DESC LIMIT 1)
 ORDER BY test_number;
