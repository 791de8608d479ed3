-- See the PostgreSQL queries. Times are INTEGER microseconds; a NULL
-- cutoff matches nothing (the rule is off). The single writer needs no
-- row locks: a batch is whatever the writer's transaction reads.

-- name: RetentionCount :one
WITH d AS (
    SELECT o.tenant_id, o.operation_id FROM operation_ledger AS o
     WHERE o.state IN ('SUCCEEDED', 'FAILED_TERMINAL') AND o.updated_at < CAST(sqlc.narg(delete_before) AS INTEGER)
       AND NOT EXISTS (SELECT 1 FROM audit_findings AS f
            WHERE f.tenant_id = o.tenant_id AND f.operation_id = o.operation_id
              AND f.acknowledged_at IS NULL AND f.resolved_at IS NULL))
SELECT (SELECT count(*) FROM d) AS operations,
    (SELECT count(*) FROM operation_events AS e JOIN d USING (tenant_id, operation_id)) AS events,
    (SELECT count(*) FROM callback_outbox AS x JOIN d USING (tenant_id, operation_id)) AS notifications,
    (SELECT count(*) FROM audit_findings AS x JOIN d USING (tenant_id, operation_id)) AS findings,
    (SELECT count(*) FROM resolutions AS x JOIN d USING (tenant_id, operation_id)) AS resolutions,
    (SELECT count(*) FROM payload_conflicts AS x JOIN d USING (tenant_id, operation_id)) AS conflicts,
    (SELECT count(*) FROM operation_ledger AS o
      WHERE o.state IN ('SUCCEEDED', 'FAILED_TERMINAL') AND length(o.payload) > 0
        AND o.updated_at < CAST(sqlc.narg(redact_before) AS INTEGER)
        AND NOT EXISTS (SELECT 1 FROM d WHERE d.tenant_id = o.tenant_id AND d.operation_id = o.operation_id)) AS payloads_redacted,
    (SELECT count(*) FROM quarantine
      WHERE resolved_at IS NOT NULL AND resolved_at < CAST(sqlc.narg(purge_before) AS INTEGER)) AS quarantine,
    (SELECT count(*) FROM webhook_inbox AS w
      WHERE processed_at IS NOT NULL AND processed_at < CAST(sqlc.narg(purge_before) AS INTEGER)
        AND NOT EXISTS (SELECT 1 FROM quarantine AS q WHERE q.delivery_id = w.delivery_id AND q.resolved_at IS NULL)) AS deliveries;

-- name: RetentionRedact :execrows
UPDATE operation_ledger SET payload = x''
 WHERE (tenant_id, operation_id) IN (SELECT tenant_id, operation_id FROM operation_ledger
         WHERE state IN ('SUCCEEDED', 'FAILED_TERMINAL') AND length(payload) > 0
           AND updated_at < CAST(sqlc.arg(before) AS INTEGER)
         ORDER BY updated_at LIMIT sqlc.arg(max));

-- name: RetentionDeletable :many
SELECT o.tenant_id, o.operation_id FROM operation_ledger AS o
 WHERE o.state IN ('SUCCEEDED', 'FAILED_TERMINAL') AND o.updated_at < CAST(sqlc.arg(before) AS INTEGER)
   AND NOT EXISTS (SELECT 1 FROM audit_findings AS f
        WHERE f.tenant_id = o.tenant_id AND f.operation_id = o.operation_id
          AND f.acknowledged_at IS NULL AND f.resolved_at IS NULL)
 ORDER BY o.updated_at LIMIT sqlc.arg(max);

-- name: ErasureOperations :many
SELECT tenant_id, operation_id FROM operation_ledger WHERE tenant_id = sqlc.arg(tenant) LIMIT sqlc.arg(max);

-- The operations named by @keys, a JSON array of [tenant, id] pairs, and
-- the rows that name them, one statement per table.

-- name: OperationEventsDelete :execrows
DELETE FROM operation_events WHERE (tenant_id, operation_id) IN
    (SELECT value ->> 0, value ->> 1 FROM json_each(sqlc.arg(keys)));

-- name: OperationCallbacksDelete :execrows
DELETE FROM callback_outbox WHERE (tenant_id, operation_id) IN
    (SELECT value ->> 0, value ->> 1 FROM json_each(sqlc.arg(keys)));

-- name: OperationEscalationsDelete :execrows
DELETE FROM escalation_outbox WHERE (tenant_id, operation_id) IN
    (SELECT value ->> 0, value ->> 1 FROM json_each(sqlc.arg(keys)));

-- name: OperationFindingsDelete :execrows
DELETE FROM audit_findings WHERE (tenant_id, operation_id) IN
    (SELECT value ->> 0, value ->> 1 FROM json_each(sqlc.arg(keys)));

-- name: OperationResolutionsDelete :execrows
DELETE FROM resolutions WHERE (tenant_id, operation_id) IN
    (SELECT value ->> 0, value ->> 1 FROM json_each(sqlc.arg(keys)));

-- name: OperationConflictsDelete :execrows
DELETE FROM payload_conflicts WHERE (tenant_id, operation_id) IN
    (SELECT value ->> 0, value ->> 1 FROM json_each(sqlc.arg(keys)));

-- name: OperationDelete :execrows
DELETE FROM operation_ledger WHERE (tenant_id, operation_id) IN
    (SELECT value ->> 0, value ->> 1 FROM json_each(sqlc.arg(keys)));

-- name: RetentionUnlock :exec
-- Lets this transaction delete rows of the append-only event log and
-- actions record (migration 00023); RetentionRelock must run before it
-- commits. The single writer means nobody else sees the row.
INSERT INTO retention_unlock (one) VALUES (1);

-- name: RetentionRelock :exec
DELETE FROM retention_unlock;

-- name: PurgeQuarantine :execrows
DELETE FROM quarantine WHERE quarantine_id IN (SELECT quarantine_id FROM quarantine
     WHERE resolved_at IS NOT NULL AND resolved_at < CAST(sqlc.arg(before) AS INTEGER)
     ORDER BY resolved_at LIMIT sqlc.arg(max));

-- name: PurgeDeliveries :execrows
DELETE FROM webhook_inbox WHERE delivery_id IN (SELECT delivery_id FROM webhook_inbox AS w
     WHERE processed_at IS NOT NULL AND processed_at < CAST(sqlc.arg(before) AS INTEGER)
       AND NOT EXISTS (SELECT 1 FROM quarantine AS q WHERE q.delivery_id = w.delivery_id AND q.resolved_at IS NULL)
     ORDER BY processed_at LIMIT sqlc.arg(max));

-- name: ErasureTokensDelete :execrows
DELETE FROM api_tokens WHERE tenant_id = sqlc.arg(tenant);

-- name: ErasureCallbackDelete :execrows
DELETE FROM tenant_callbacks WHERE tenant_id = sqlc.arg(tenant);

-- name: ErasureParamsDelete :execrows
DELETE FROM tenant_params WHERE tenant_id = sqlc.arg(tenant);

-- name: ErasureTenantDelete :exec
DELETE FROM tenants WHERE tenant_id = sqlc.arg(tenant);

-- name: ErasureDeliveriesDelete :execrows
DELETE FROM webhook_inbox WHERE delivery_id IN (SELECT q.delivery_id FROM quarantine AS q
     WHERE (q.scope_tenant = sqlc.arg(tenant) OR q.operation_tenant = sqlc.arg(tenant)) AND q.delivery_id IS NOT NULL)
   AND NOT EXISTS (SELECT 1 FROM quarantine AS o WHERE o.delivery_id = webhook_inbox.delivery_id
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

-- name: ErasureFigureDaysDelete :execrows
DELETE FROM figure_days WHERE tenant_id = sqlc.arg(tenant);

-- name: ErasureFigureEpisodesDelete :execrows
DELETE FROM figure_episodes WHERE tenant_id = sqlc.arg(tenant);

-- name: ErasureFigureEscalationsDelete :execrows
DELETE FROM figure_escalations WHERE tenant_id = sqlc.arg(tenant);

-- name: ErasureObservationsDelete :exec
DELETE FROM observations WHERE tenant_id = sqlc.arg(tenant);

-- name: ErasureInsert :one
INSERT INTO tenant_erasures (tenant_id, at, subject, actor_name, role, forced, unfinished, counts)
VALUES (@tenant_id, @at, @subject, @actor_name, @role, @forced, @unfinished, @counts)
RETURNING erasure_id;

-- name: ErasureList :many
SELECT erasure_id, tenant_id, at, subject, actor_name, role, forced, unfinished, counts
  FROM tenant_erasures WHERE tenant_id = sqlc.arg(tenant) ORDER BY erasure_id DESC;
