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
