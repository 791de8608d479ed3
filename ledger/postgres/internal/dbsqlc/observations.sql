-- name: ObservationInsert :exec
-- One statement for a whole commit: the arrays, all of one length, are
-- unnested in step, in their order; an empty to_state is a refusal.
INSERT INTO observations (tenant_id, operation_id, target, from_state, to_state, at, refused)
SELECT unnest(@tenants::text[]), unnest(@operation_ids::text[]), unnest(@targets::text[]),
       unnest(@from_states::text[]), unnest(@to_states::text[]), unnest(@ats::timestamptz[]),
       unnest(@to_states::text[]) = '';

-- name: ObservationDrain :many
-- SKIP LOCKED lets replicas drain at once, each taking rows the others
-- have not locked.
DELETE FROM observations WHERE observation_id IN (
  SELECT observation_id FROM observations ORDER BY observation_id LIMIT @max_rows FOR UPDATE SKIP LOCKED)
RETURNING observation_id, tenant_id, operation_id, target, from_state, to_state, at, refused;

-- name: GaugeRows :many
-- The live states through the partial index that leaves out the SUCCEEDED
-- bulk (operation_ledger_state_created), the open quarantine through
-- quarantine_open; for the quarantine, state says whether the scope
-- tenant exists ('known').
SELECT 'op'::text AS kind, tenant_id, target, state, count(*) AS n,
       count(*) FILTER (WHERE state = 'UNKNOWN' AND l.next_reconcile_at <= @now::timestamptz) AS due,
       count(*) FILTER (WHERE state = 'UNKNOWN' AND l.deadline <= @now::timestamptz) AS overdue,
       min(updated_at)::timestamptz AS oldest
  FROM operation_ledger l
 WHERE state <> 'SUCCEEDED' AND state IN ('PREPARED', 'IN_FLIGHT', 'UNKNOWN', 'ESCALATED')
 GROUP BY tenant_id, target, state
UNION ALL
SELECT 'quarantine'::text, scope_tenant, target,
       CASE WHEN EXISTS (SELECT 1 FROM operation_ledger o WHERE o.tenant_id = quarantine.scope_tenant)
            THEN 'known' ELSE '' END,
       count(*), 0, 0, min(quarantined_at)::timestamptz
  FROM quarantine WHERE resolved_at IS NULL
 GROUP BY scope_tenant, target;
