-- name: ObservationInsert :exec
INSERT INTO observations (tenant_id, operation_id, target, from_state, to_state, at, refused)
VALUES (@tenant_id, @operation_id, @target, @from_state, @to_state, @at, @refused);

-- name: ObservationDrain :many
-- The single writer serialises drainers: each row is deleted, and
-- returned, once.
DELETE FROM observations WHERE observation_id IN (
  SELECT observation_id FROM observations ORDER BY observation_id LIMIT CAST(sqlc.arg(max_rows) AS INTEGER))
RETURNING observation_id, tenant_id, operation_id, target, from_state, to_state, at, refused;

-- name: GaugeRows :many
-- Through the partial indexes that leave out the SUCCEEDED bulk and
-- resolved quarantine items; for the quarantine, state says whether the
-- scope tenant exists ('known').
SELECT CAST('op' AS TEXT) AS kind, tenant_id, target, state, count(*) AS n,
       count(CASE WHEN state = 'UNKNOWN' AND l.next_reconcile_at <= CAST(sqlc.arg(now) AS INTEGER) THEN 1 END) AS due,
       count(CASE WHEN state = 'UNKNOWN' AND l.deadline <= CAST(sqlc.arg(now) AS INTEGER) THEN 1 END) AS overdue,
       CAST(min(updated_at) AS INTEGER) AS oldest
  FROM operation_ledger l
 WHERE state <> 'SUCCEEDED' AND state IN ('PREPARED', 'IN_FLIGHT', 'UNKNOWN', 'ESCALATED')
 GROUP BY tenant_id, target, state
UNION ALL
SELECT 'quarantine', scope_tenant, target,
       CASE WHEN EXISTS (SELECT 1 FROM operation_ledger o WHERE o.tenant_id = quarantine.scope_tenant)
            THEN 'known' ELSE '' END,
       count(*), 0, 0, min(quarantined_at)
  FROM quarantine WHERE resolved_at IS NULL
 GROUP BY scope_tenant, target;
