-- name: CallbackAttemptRecord :exec
-- See the PostgreSQL query.
UPDATE tenant_callbacks
   SET last_attempt_at = CAST(sqlc.arg(at) AS INTEGER),
       last_attempt_status = sqlc.arg(status),
       last_attempt_error = sqlc.arg(error),
       last_success_at = CASE WHEN CAST(sqlc.arg(ok) AS INTEGER) THEN CAST(sqlc.arg(at) AS INTEGER) ELSE last_success_at END,
       failures_since_success = CASE WHEN CAST(sqlc.arg(ok) AS INTEGER) THEN 0 ELSE failures_since_success + 1 END
 WHERE tenant_id = (SELECT o.tenant_id FROM callback_outbox AS o WHERE o.callback_id = sqlc.arg(callback_id)
                      AND (CAST(sqlc.arg(ok) AS INTEGER) OR o.delivered_at IS NULL))
   AND (last_attempt_at IS NULL OR last_attempt_at <= CAST(sqlc.arg(at) AS INTEGER));

-- name: CallbackDeliveryGet :one
-- See the PostgreSQL query.
SELECT c.last_attempt_at, c.last_attempt_status, c.last_attempt_error, c.last_success_at,
       c.failures_since_success,
       (SELECT count(*) FROM (SELECT 1 FROM callback_outbox AS o
         WHERE o.tenant_id = c.tenant_id AND o.delivered_at IS NULL AND o.gave_up_at IS NULL
         LIMIT sqlc.arg(max_pending))) AS pending
  FROM tenant_callbacks AS c
 WHERE c.tenant_id = sqlc.arg(tenant);
