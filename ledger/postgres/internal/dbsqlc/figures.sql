-- name: FigureTransitions :many
SELECT e.operation_id::text AS operation_id, o.target, coalesce(e.from_state, '')::text AS from_state,
       e.to_state, e.at
  FROM operation_events e JOIN operation_ledger o
    ON o.tenant_id = e.tenant_id AND o.operation_id = e.operation_id
 WHERE e.tenant_id = @tenant_id AND e.at >= @since AND e.at < @until
   AND e.to_state IN ('UNKNOWN', 'SUCCEEDED', 'FAILED_TERMINAL', 'ESCALATED')
 ORDER BY e.at, e.event_id;

-- name: OperationTenants :many
-- A loose index scan: one probe of operation_ledger_tenant_created per
-- tenant, not a walk of every row.
WITH RECURSIVE t(id) AS (
  SELECT min(tenant_id) FROM operation_ledger
  UNION ALL
  SELECT (SELECT min(tenant_id) FROM operation_ledger WHERE tenant_id > t.id) FROM t WHERE t.id IS NOT NULL
) SELECT id::text FROM t WHERE id IS NOT NULL;

-- name: FigureTargets :many
SELECT DISTINCT target FROM figure_days
 WHERE tenant_id = @tenant_id AND day >= CAST(@since_day::text AS date) AND day < CAST(@until_day::text AS date);

-- name: FigureEpisodes :many
SELECT target, entered_at, escalated_at, final_at, coalesce(final_state, '')::text AS final_state
  FROM figure_episodes WHERE tenant_id = @tenant_id AND entered_at >= @since AND entered_at < @until;

-- name: FigureEscalations :many
SELECT target, at FROM figure_escalations WHERE tenant_id = @tenant_id AND at >= @since AND at < @until;

-- The all-tenants overview reads every tenant's figures with the six
-- statements below, each over the tenants at once, instead of six per
-- tenant: FigureTargets, FigureEpisodes and FigureEscalations, the payload
-- conflicts, the duplicate findings and the open escalations.

-- name: FigureTargetsOf :many
SELECT DISTINCT tenant_id::text AS tenant_id, target FROM figure_days
 WHERE tenant_id = ANY(@tenants::text[])
   AND day >= CAST(@since_day::text AS date) AND day < CAST(@until_day::text AS date);

-- name: FigureEpisodesOf :many
SELECT tenant_id::text AS tenant_id, target, entered_at, escalated_at, final_at,
       coalesce(final_state, '')::text AS final_state
  FROM figure_episodes
 WHERE tenant_id = ANY(@tenants::text[]) AND entered_at >= @since AND entered_at < @until;

-- name: FigureEscalationsOf :many
SELECT tenant_id::text AS tenant_id, target, at FROM figure_escalations
 WHERE tenant_id = ANY(@tenants::text[]) AND at >= @since AND at < @until;

-- name: PayloadConflictCountsOf :many
SELECT tenant_id::text AS tenant_id, count(*) AS n FROM payload_conflicts
 WHERE tenant_id = ANY(@tenants::text[]) AND at >= @since::timestamptz AND at < @until::timestamptz
 GROUP BY tenant_id;

-- name: FindingCountsOf :many
SELECT tenant_id::text AS tenant_id, count(*) AS n FROM audit_findings
 WHERE tenant_id = ANY(@tenants::text[]) AND found_at >= @since::timestamptz AND found_at < @until::timestamptz
   AND kind = @kind::text
 GROUP BY tenant_id;

-- name: EscalatedCountsOf :many
-- The open escalations per tenant and target, with the oldest one's last
-- change: what Figures reads by listing the ESCALATED operations.
SELECT tenant_id::text AS tenant_id, target, count(*) AS n, min(updated_at)::timestamptz AS oldest
  FROM operation_ledger
 WHERE tenant_id = ANY(@tenants::text[]) AND state = 'ESCALATED'
 GROUP BY tenant_id, target;
