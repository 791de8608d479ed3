-- name: CallbackAttemptRecord :exec
-- The tenant's delivery status after an attempt of notification
-- @callback_id: a report older than the last one recorded is left out, so
-- replicas finishing out of order never put an older answer back, nor is
-- a late failure report on a notification another replica delivered.
UPDATE tenant_callbacks AS c
   SET last_attempt_at = sqlc.arg(at)::timestamptz,
       last_attempt_status = sqlc.arg(status)::int,
       last_attempt_error = sqlc.arg(error)::text,
       last_success_at = CASE WHEN sqlc.arg(ok)::boolean THEN sqlc.arg(at)::timestamptz ELSE c.last_success_at END,
       failures_since_success = CASE WHEN sqlc.arg(ok)::boolean THEN 0 ELSE c.failures_since_success + 1 END
  FROM callback_outbox AS o
 WHERE o.callback_id = sqlc.arg(callback_id) AND c.tenant_id = o.tenant_id
   AND (sqlc.arg(ok)::boolean OR o.delivered_at IS NULL)
   AND (c.last_attempt_at IS NULL OR c.last_attempt_at <= sqlc.arg(at)::timestamptz);

-- name: CallbackDeliveryGet :one
-- The tenant's delivery status and its notifications waiting to be
-- delivered (counted up to @max_pending over the outbox's pending index).
SELECT c.last_attempt_at, c.last_attempt_status, c.last_attempt_error, c.last_success_at,
       c.failures_since_success,
       (SELECT count(*) FROM (SELECT 1 FROM callback_outbox AS o
         WHERE o.tenant_id = c.tenant_id AND o.delivered_at IS NULL AND o.gave_up_at IS NULL
         LIMIT sqlc.arg(max_pending)::int) AS p)::int AS pending
  FROM tenant_callbacks AS c
 WHERE c.tenant_id = sqlc.arg(tenant);
