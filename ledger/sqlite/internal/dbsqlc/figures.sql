-- name: FigureTransitions :many
SELECT e.operation_id, o.target, CAST(coalesce(e.from_state, '') AS TEXT) AS from_state, e.to_state, e.at
  FROM operation_events e JOIN operation_ledger o
    ON o.tenant_id = e.tenant_id AND o.operation_id = e.operation_id
 WHERE e.tenant_id = @tenant_id AND e.at >= @since AND e.at < @until
   AND e.to_state IN ('UNKNOWN', 'SUCCEEDED', 'FAILED_TERMINAL', 'ESCALATED')
 ORDER BY e.at, e.event_id;

-- name: OperationTenants :many
SELECT DISTINCT tenant_id FROM operation_ledger ORDER BY tenant_id;

-- name: FigureTargets :many
SELECT DISTINCT target FROM figure_days WHERE tenant_id = @tenant_id AND day >= @since_day AND day < @until_day;

-- name: FigureEpisodes :many
SELECT target, entered_at, escalated_at, final_at, CAST(coalesce(final_state, '') AS TEXT) AS final_state
  FROM figure_episodes WHERE tenant_id = @tenant_id AND entered_at >= @since AND entered_at < @until;

-- name: FigureEscalations :many
SELECT target, at FROM figure_escalations WHERE tenant_id = @tenant_id AND at >= @since AND at < @until;

-- The all-tenants overview reads every tenant's figures with the six
-- statements below, each over the tenants at once, instead of six per
-- tenant (see the PostgreSQL queries). The tenants' slice comes last in
-- each: sqlc numbers the named parameters (?1, ?2) and a slice before them
-- would take their numbers.

-- name: FigureTargetsOf :many
SELECT DISTINCT tenant_id, target FROM figure_days
 WHERE day >= @since_day AND day < @until_day AND tenant_id IN (sqlc.slice(tenants));

-- name: FigureEpisodesOf :many
SELECT tenant_id, target, entered_at, escalated_at, final_at, CAST(coalesce(final_state, '') AS TEXT) AS final_state
  FROM figure_episodes
 WHERE entered_at >= @since AND entered_at < @until AND tenant_id IN (sqlc.slice(tenants));

-- name: FigureEscalationsOf :many
SELECT tenant_id, target, at FROM figure_escalations
 WHERE at >= @since AND at < @until AND tenant_id IN (sqlc.slice(tenants));

-- name: PayloadConflictCountsOf :many
SELECT tenant_id, count(*) AS n FROM payload_conflicts
 WHERE at >= @since AND at < @until AND tenant_id IN (sqlc.slice(tenants))
 GROUP BY tenant_id;

-- name: FindingCountsOf :many
SELECT tenant_id, count(*) AS n FROM audit_findings
 WHERE found_at >= CAST(sqlc.arg(since) AS INTEGER) AND found_at < CAST(sqlc.arg(until) AS INTEGER)
   AND kind = CAST(@kind AS TEXT) AND tenant_id IN (sqlc.slice(tenants))
 GROUP BY tenant_id;

-- name: EscalatedCountsOf :many
SELECT tenant_id, target, count(*) AS n, CAST(min(updated_at) AS INTEGER) AS oldest
  FROM operation_ledger
 WHERE state = 'ESCALATED' AND tenant_id IN (sqlc.slice(tenants))
 GROUP BY tenant_id, target;
