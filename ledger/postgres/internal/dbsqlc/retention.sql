-- Retention (ledger.RetentionStore) and a tenant's erasure
-- (ledger.TenantEraser). The final states are literals, so the planner
-- uses operation_ledger_final_updated; a NULL cutoff matches nothing (the
-- rule is off).

-- name: RetentionCount :one
-- What the cutoffs would remove now. d: the final operations settled
-- before @delete_before that no audit finding still waits on a person for
-- (RetentionDeletable's set); operations in d are not also counted as
-- redacted.
WITH d AS (
    SELECT o.tenant_id, o.operation_id FROM operation_ledger AS o
     WHERE o.state IN ('SUCCEEDED', 'FAILED_TERMINAL') AND o.updated_at < sqlc.narg(delete_before)::timestamptz
       AND NOT EXISTS (SELECT 1 FROM audit_findings AS f
            WHERE f.tenant_id = o.tenant_id AND f.operation_id = o.operation_id
              AND f.acknowledged_at IS NULL AND f.resolved_at IS NULL))
SELECT (SELECT count(*) FROM d)::int AS operations,
    (SELECT count(*) FROM operation_events AS e JOIN d USING (tenant_id, operation_id))::int AS events,
    (SELECT count(*) FROM callback_outbox AS x JOIN d USING (tenant_id, operation_id))::int AS notifications,
    (SELECT count(*) FROM audit_findings AS x JOIN d USING (tenant_id, operation_id))::int AS findings,
    (SELECT count(*) FROM resolutions AS x JOIN d USING (tenant_id, operation_id))::int AS resolutions,
    (SELECT count(*) FROM payload_conflicts AS x JOIN d USING (tenant_id, operation_id))::int AS conflicts,
    (SELECT count(*) FROM operation_ledger AS o
      WHERE o.state IN ('SUCCEEDED', 'FAILED_TERMINAL') AND octet_length(o.payload) > 0
        AND o.updated_at < sqlc.narg(redact_before)::timestamptz
        AND NOT EXISTS (SELECT 1 FROM d WHERE d.tenant_id = o.tenant_id AND d.operation_id = o.operation_id))::int AS payloads_redacted,
    (SELECT count(*) FROM quarantine
      WHERE resolved_at IS NOT NULL AND resolved_at < sqlc.narg(purge_before)::timestamptz)::int AS quarantine,
    (SELECT count(*) FROM webhook_inbox AS w
      WHERE processed_at IS NOT NULL AND processed_at < sqlc.narg(purge_before)::timestamptz
        AND NOT EXISTS (SELECT 1 FROM quarantine AS q WHERE q.delivery_id = w.delivery_id AND q.resolved_at IS NULL))::int AS deliveries;

-- name: RetentionRedact :execrows
-- SKIP LOCKED leaves rows another replica's pass holds to that pass.
UPDATE operation_ledger AS o SET payload = ''::bytea
  FROM (SELECT tenant_id, operation_id FROM operation_ledger
         WHERE state IN ('SUCCEEDED', 'FAILED_TERMINAL') AND octet_length(payload) > 0
           AND updated_at < sqlc.arg(before)::timestamptz
         ORDER BY updated_at LIMIT sqlc.arg(max)::int FOR UPDATE SKIP LOCKED) AS r
 WHERE o.tenant_id = r.tenant_id AND o.operation_id = r.operation_id;

-- name: RetentionDeletable :many
-- Up to @max of RetentionCount's d, oldest first, locked; SKIP LOCKED
-- leaves another replica's batch to it.
SELECT o.tenant_id, o.operation_id::text AS operation_id FROM operation_ledger AS o
 WHERE o.state IN ('SUCCEEDED', 'FAILED_TERMINAL') AND o.updated_at < sqlc.arg(before)::timestamptz
   AND NOT EXISTS (SELECT 1 FROM audit_findings AS f
        WHERE f.tenant_id = o.tenant_id AND f.operation_id = o.operation_id
          AND f.acknowledged_at IS NULL AND f.resolved_at IS NULL)
 ORDER BY o.updated_at LIMIT sqlc.arg(max)::int FOR UPDATE OF o SKIP LOCKED;

-- name: ErasureOperations :many
-- Up to @max of the tenant's operations, locked.
SELECT tenant_id, operation_id::text AS operation_id FROM operation_ledger
 WHERE tenant_id = sqlc.arg(tenant) LIMIT sqlc.arg(max)::int FOR UPDATE;

-- One statement per table and operation, sent as one batch each: each
-- finds its rows by its index, where a set-at-once DELETE is planned as a
-- scan of the whole child table while that table is small enough for the
-- planner to prefer one. The count comes back as the statement's row.

-- name: OperationEventsDelete :batchone
WITH x AS (DELETE FROM operation_events WHERE tenant_id = sqlc.arg(tenant) AND operation_id = sqlc.arg(operation_id)::text::uuid RETURNING 1)
SELECT count(*)::int FROM x;

-- name: OperationCallbacksDelete :batchone
WITH x AS (DELETE FROM callback_outbox WHERE tenant_id = sqlc.arg(tenant) AND operation_id = sqlc.arg(operation_id)::text::uuid RETURNING 1)
SELECT count(*)::int FROM x;

-- name: OperationEscalationsDelete :batchone
WITH x AS (DELETE FROM escalation_outbox WHERE tenant_id = sqlc.arg(tenant) AND operation_id = sqlc.arg(operation_id)::text::uuid RETURNING 1)
SELECT count(*)::int FROM x;

-- name: OperationFindingsDelete :batchone
WITH x AS (DELETE FROM audit_findings WHERE tenant_id = sqlc.arg(tenant) AND operation_id = sqlc.arg(operation_id)::text::uuid RETURNING 1)
SELECT count(*)::int FROM x;

-- name: OperationResolutionsDelete :batchone
WITH x AS (DELETE FROM resolutions WHERE tenant_id = sqlc.arg(tenant) AND operation_id = sqlc.arg(operation_id)::text::uuid RETURNING 1)
SELECT count(*)::int FROM x;

-- name: OperationConflictsDelete :batchone
WITH x AS (DELETE FROM payload_conflicts WHERE tenant_id = sqlc.arg(tenant) AND operation_id = sqlc.arg(operation_id)::text::uuid RETURNING 1)
SELECT count(*)::int FROM x;

-- name: OperationDelete :batchone
WITH x AS (DELETE FROM operation_ledger WHERE tenant_id = sqlc.arg(tenant) AND operation_id = sqlc.arg(operation_id)::text::uuid RETURNING 1)
SELECT count(*)::int FROM x;

-- name: RetentionUnlock :exec
-- Lets this transaction, and only it, delete rows of the append-only
-- event log and actions record (migration 00023).
SELECT set_config('settle.retention', 'on', true);

-- name: PurgeQuarantine :execrows
DELETE FROM quarantine WHERE quarantine_id IN (SELECT quarantine_id FROM quarantine
     WHERE resolved_at IS NOT NULL AND resolved_at < sqlc.arg(before)::timestamptz
     ORDER BY resolved_at LIMIT sqlc.arg(max)::int FOR UPDATE SKIP LOCKED);

-- name: PurgeDeliveries :execrows
DELETE FROM webhook_inbox WHERE delivery_id IN (SELECT delivery_id FROM webhook_inbox AS w
     WHERE processed_at IS NOT NULL AND processed_at < sqlc.arg(before)::timestamptz
       AND NOT EXISTS (SELECT 1 FROM quarantine AS q WHERE q.delivery_id = w.delivery_id AND q.resolved_at IS NULL)
     ORDER BY processed_at LIMIT sqlc.arg(max)::int FOR UPDATE SKIP LOCKED);

-- name: ErasureTokensDelete :execrows
DELETE FROM api_tokens WHERE tenant_id = sqlc.arg(tenant);

-- name: ErasureCallbackDelete :execrows
DELETE FROM tenant_callbacks WHERE tenant_id = sqlc.arg(tenant);

-- name: ErasureParamsDelete :execrows
DELETE FROM tenant_params WHERE tenant_id = sqlc.arg(tenant);

-- name: ErasureTenantDelete :exec
DELETE FROM tenants WHERE tenant_id = sqlc.arg(tenant);

-- name: ErasureDeliveriesDelete :execrows
-- The deliveries of the quarantine items in the tenant's scope or naming
-- its operations, unless another tenant's item names them too.
DELETE FROM webhook_inbox AS w WHERE w.delivery_id IN (SELECT q.delivery_id FROM quarantine AS q
     WHERE (q.scope_tenant = sqlc.arg(tenant) OR q.operation_tenant = sqlc.arg(tenant)) AND q.delivery_id IS NOT NULL)
   AND NOT EXISTS (SELECT 1 FROM quarantine AS o WHERE o.delivery_id = w.delivery_id
        AND o.scope_tenant <> sqlc.arg(tenant) AND o.operation_tenant <> sqlc.arg(tenant));

-- name: ErasureQuarantineDelete :execrows
DELETE FROM quarantine WHERE scope_tenant = sqlc.arg(tenant) OR operation_tenant = sqlc.arg(tenant);

-- name: ErasureCallbacksDelete :execrows
DELETE FROM callback_outbox WHERE tenant_id = sqlc.arg(tenant);

-- name: ErasureEscalationsDelete :execrows
DELETE FROM escalation_outbox WHERE tenant_id = sqlc.arg(tenant);

-- name: ErasureFindingsDelete :execrows
DELETE FROM audit_findings WHERE tenant_id = sqlc.arg(tenant);

-- name: ErasureResolutionsDelete :execrows
DELETE FROM resolutions WHERE tenant_id = sqlc.arg(tenant);

-- name: ErasureConflictsDelete :execrows
DELETE FROM payload_conflicts WHERE tenant_id = sqlc.arg(tenant);

-- name: ErasureActionsDelete :execrows
DELETE FROM actions WHERE tenant_id = sqlc.arg(tenant);

-- name: ErasureObservationsDelete :exec
DELETE FROM observations WHERE tenant_id = sqlc.arg(tenant);

-- name: ErasureRollupsDelete :one
WITH a AS (DELETE FROM figure_days AS fd WHERE fd.tenant_id = sqlc.arg(tenant) RETURNING 1),
     b AS (DELETE FROM figure_episodes AS fe WHERE fe.tenant_id = sqlc.arg(tenant) RETURNING 1),
     c AS (DELETE FROM figure_escalations AS fx WHERE fx.tenant_id = sqlc.arg(tenant) RETURNING 1)
SELECT ((SELECT count(*) FROM a) + (SELECT count(*) FROM b) + (SELECT count(*) FROM c))::int AS rollups;

-- name: ErasureInsert :one
INSERT INTO tenant_erasures (tenant_id, at, subject, actor_name, role, forced, unfinished, counts)
VALUES (@tenant_id, @at, @subject, @actor_name, @role, @forced, @unfinished, @counts)
RETURNING erasure_id;

-- name: ErasureList :many
SELECT erasure_id, tenant_id, at, subject, actor_name, role, forced, unfinished, counts
  FROM tenant_erasures WHERE tenant_id = sqlc.arg(tenant) ORDER BY erasure_id DESC;
