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

-- name: CallbackUpsert :exec
-- See the PostgreSQL query.
INSERT INTO tenant_callbacks (tenant_id, url, secret, created_at, updated_at)
VALUES (sqlc.arg(tenant), sqlc.arg(url), sqlc.arg(secret), CAST(sqlc.arg(at) AS INTEGER), CAST(sqlc.arg(at) AS INTEGER))
ON CONFLICT (tenant_id) DO UPDATE SET url = excluded.url, secret = excluded.secret,
    updated_at = excluded.updated_at, last_attempt_at = NULL, last_attempt_status = 0,
    last_attempt_error = '', last_success_at = NULL, failures_since_success = 0;

-- name: CallbackDelete :one
-- The endpoint; CallbackPendingDelete follows it in the transaction.
DELETE FROM tenant_callbacks WHERE tenant_id = sqlc.arg(tenant) RETURNING url;

-- name: CallbackPendingDelete :exec
DELETE FROM callback_outbox WHERE tenant_id = sqlc.arg(tenant) AND delivered_at IS NULL;

-- name: CallbackGet :one
SELECT url, secret, created_at, updated_at FROM tenant_callbacks
 WHERE tenant_id = sqlc.arg(tenant);

-- name: NotificationClaim :many
-- The single writer serialises claimers; due rows are ranked within their
-- tenant and taken rank by rank, so one tenant's backlog does not hold up
-- another's. The skipped tenants (a JSON list: their endpoint's deliveries
-- all in progress) offer none.
UPDATE callback_outbox
   SET attempts = attempts + 1, next_attempt_at = CAST(sqlc.arg(lease_until) AS INTEGER)
 WHERE callback_id IN (
    SELECT callback_id FROM (
        SELECT callback_id, next_attempt_at, row_number() OVER (
            PARTITION BY tenant_id ORDER BY next_attempt_at, callback_id) AS "rank"
        FROM callback_outbox
        WHERE delivered_at IS NULL AND gave_up_at IS NULL AND next_attempt_at <= CAST(sqlc.arg(now) AS INTEGER)
            AND tenant_id NOT IN (SELECT value FROM json_each(CAST(sqlc.arg(skip_tenants) AS TEXT))))
    ORDER BY "rank", next_attempt_at LIMIT CAST(sqlc.arg(max) AS INTEGER))
RETURNING *;

-- name: NotificationDelivered :execrows
-- A repeated acknowledgement keeps the first time.
UPDATE callback_outbox SET delivered_at = coalesce(delivered_at, CAST(sqlc.arg(at) AS INTEGER)),
    last_status = CAST(sqlc.arg(status) AS INTEGER), last_error = ''
 WHERE callback_id = sqlc.arg(id);

-- name: NotificationFailed :exec
-- A delivered row is left alone (see the PostgreSQL query);
-- NotificationExists follows it in the transaction.
UPDATE callback_outbox SET next_attempt_at = CAST(sqlc.arg(next) AS INTEGER),
    last_status = nullif(CAST(sqlc.arg(status) AS INTEGER), 0), last_error = sqlc.arg(error)
 WHERE callback_id = sqlc.arg(id) AND delivered_at IS NULL;

-- name: NotificationGiveUp :exec
-- As NotificationFailed, but the retries stop.
UPDATE callback_outbox SET gave_up_at = coalesce(gave_up_at, CAST(sqlc.arg(at) AS INTEGER)),
    last_status = nullif(CAST(sqlc.arg(status) AS INTEGER), 0), last_error = sqlc.arg(error)
 WHERE callback_id = sqlc.arg(id) AND delivered_at IS NULL;

-- name: NotificationExists :one
SELECT EXISTS (SELECT 1 FROM callback_outbox WHERE callback_id = sqlc.arg(id));

-- name: NotificationGivenUpCount :one
SELECT count(*) FROM callback_outbox
 WHERE tenant_id = sqlc.arg(tenant) AND gave_up_at IS NOT NULL AND delivered_at IS NULL;

-- name: NotificationGivenUpList :many
SELECT * FROM callback_outbox
 WHERE tenant_id = sqlc.arg(tenant) AND gave_up_at IS NOT NULL AND delivered_at IS NULL
 ORDER BY gave_up_at DESC, callback_id DESC LIMIT CAST(sqlc.arg(max) AS INTEGER);

-- name: NotificationRetry :execrows
UPDATE callback_outbox SET gave_up_at = NULL, attempts = 0, next_attempt_at = CAST(sqlc.arg(at) AS INTEGER)
 WHERE tenant_id = sqlc.arg(tenant) AND gave_up_at IS NOT NULL AND delivered_at IS NULL;

-- name: NotificationList :many
SELECT * FROM callback_outbox
 WHERE tenant_id = sqlc.arg(tenant) AND operation_id = sqlc.arg(operation_id)
 ORDER BY callback_id;
