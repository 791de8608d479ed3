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

-- name: CallbackUpsert :exec
-- A new endpoint, or a new URL and secret for the tenant's: its delivery
-- status starts afresh.
INSERT INTO tenant_callbacks (tenant_id, url, secret, created_at, updated_at)
VALUES (sqlc.arg(tenant), sqlc.arg(url), sqlc.arg(secret), sqlc.arg(at)::timestamptz, sqlc.arg(at)::timestamptz)
ON CONFLICT (tenant_id) DO UPDATE SET url = excluded.url, secret = excluded.secret,
    updated_at = excluded.updated_at, last_attempt_at = NULL, last_attempt_status = 0,
    last_attempt_error = '', last_success_at = NULL, failures_since_success = 0;

-- name: CallbackDelete :one
-- The endpoint and its undelivered notifications in one statement;
-- removed is 0 when the tenant had none.
WITH d AS (DELETE FROM tenant_callbacks c WHERE c.tenant_id = sqlc.arg(tenant) RETURNING c.url),
    p AS (DELETE FROM callback_outbox o WHERE o.tenant_id = sqlc.arg(tenant) AND o.delivered_at IS NULL)
SELECT count(*) AS removed, coalesce(min(url), '')::text AS url FROM d;

-- name: CallbackGet :one
SELECT url, secret, created_at, updated_at FROM tenant_callbacks
 WHERE tenant_id = sqlc.arg(tenant);

-- name: NotificationClaim :many
-- Fairness: each tenant with a callback offers at most @max of its due
-- rows, which are taken rank by rank, so one tenant's dead endpoint with a
-- large backlog does not hold up another tenant's few. The cost follows
-- the number of tenants with a callback, not the backlog. SKIP LOCKED lets
-- concurrent claimers in other replicas pass over rows being claimed; the
-- due re-check makes a row just claimed by another invisible. The skipped
-- tenants (their endpoint's deliveries all in progress) offer none.
WITH due AS (
    SELECT o.callback_id, o.next_attempt_at,
        row_number() OVER (PARTITION BY t.tenant_id ORDER BY o.next_attempt_at, o.callback_id) AS rank
    FROM tenant_callbacks t CROSS JOIN LATERAL (
        SELECT b.callback_id, b.next_attempt_at FROM callback_outbox b
        WHERE b.tenant_id = t.tenant_id AND b.delivered_at IS NULL AND b.gave_up_at IS NULL
            AND b.next_attempt_at <= sqlc.arg(now)::timestamptz
        ORDER BY b.next_attempt_at LIMIT sqlc.arg(max)::int) o
    WHERE t.tenant_id <> ALL(sqlc.arg(skip_tenants)::text[])
), picked AS (
    SELECT callback_id FROM callback_outbox
    WHERE callback_id IN (SELECT callback_id FROM due ORDER BY rank, next_attempt_at LIMIT sqlc.arg(max)::int)
        AND delivered_at IS NULL AND gave_up_at IS NULL AND next_attempt_at <= sqlc.arg(now)::timestamptz
    FOR UPDATE SKIP LOCKED
)
UPDATE callback_outbox c SET attempts = c.attempts + 1, next_attempt_at = sqlc.arg(lease_until)::timestamptz
FROM picked p WHERE c.callback_id = p.callback_id
RETURNING c.*;

-- name: NotificationDelivered :execrows
-- A repeated acknowledgement keeps the first time.
UPDATE callback_outbox SET delivered_at = coalesce(delivered_at, sqlc.arg(at)::timestamptz),
    last_status = sqlc.arg(status)::int, last_error = ''
 WHERE callback_id = sqlc.arg(id);

-- name: NotificationFailed :one
-- A delivered row is left alone: a late failure report from a sender whose
-- lease ran out must not undo another's acknowledgement. found is whether
-- the row exists.
WITH u AS (
    UPDATE callback_outbox SET next_attempt_at = sqlc.arg(next)::timestamptz,
        last_status = nullif(sqlc.arg(status)::int, 0), last_error = sqlc.arg(error)::text
    WHERE callback_id = sqlc.arg(id) AND delivered_at IS NULL
)
SELECT EXISTS (SELECT 1 FROM callback_outbox o WHERE o.callback_id = sqlc.arg(id)) AS found;

-- name: NotificationGiveUp :one
-- As NotificationFailed, but the retries stop.
WITH u AS (
    UPDATE callback_outbox SET gave_up_at = coalesce(gave_up_at, sqlc.arg(at)::timestamptz),
        last_status = nullif(sqlc.arg(status)::int, 0), last_error = sqlc.arg(error)::text
    WHERE callback_id = sqlc.arg(id) AND delivered_at IS NULL
)
SELECT EXISTS (SELECT 1 FROM callback_outbox o WHERE o.callback_id = sqlc.arg(id)) AS found;

-- name: NotificationGivenUpCount :one
SELECT count(*) FROM callback_outbox
 WHERE tenant_id = sqlc.arg(tenant) AND gave_up_at IS NOT NULL AND delivered_at IS NULL;

-- name: NotificationGivenUpList :many
SELECT * FROM callback_outbox
 WHERE tenant_id = sqlc.arg(tenant) AND gave_up_at IS NOT NULL AND delivered_at IS NULL
 ORDER BY gave_up_at DESC, callback_id DESC LIMIT sqlc.arg(max)::int;

-- name: NotificationRetry :execrows
UPDATE callback_outbox SET gave_up_at = NULL, attempts = 0, next_attempt_at = sqlc.arg(at)::timestamptz
 WHERE tenant_id = sqlc.arg(tenant) AND gave_up_at IS NOT NULL AND delivered_at IS NULL;

-- name: NotificationList :many
SELECT * FROM callback_outbox
 WHERE tenant_id = sqlc.arg(tenant) AND operation_id = sqlc.arg(operation_id)::text::uuid
 ORDER BY callback_id;
