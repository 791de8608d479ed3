-- name: EscalationNoticeClaim :many
-- Oldest first; the single writer serialises claimers.
UPDATE escalation_outbox
   SET attempts = attempts + 1, next_attempt_at = CAST(sqlc.arg(lease_until) AS INTEGER)
 WHERE notice_id IN (SELECT notice_id FROM escalation_outbox
    WHERE delivered_at IS NULL AND gave_up_at IS NULL AND next_attempt_at <= CAST(sqlc.arg(now) AS INTEGER)
    ORDER BY next_attempt_at, notice_id LIMIT CAST(sqlc.arg(max) AS INTEGER))
RETURNING *;

-- name: EscalationNoticeDelivered :execrows
-- A repeated acknowledgement keeps the first time.
UPDATE escalation_outbox SET delivered_at = coalesce(delivered_at, CAST(sqlc.arg(at) AS INTEGER)),
    last_status = CAST(sqlc.arg(status) AS INTEGER), last_error = ''
 WHERE notice_id = sqlc.arg(id);

-- name: EscalationNoticeFailed :exec
-- A delivered notice is left alone; EscalationNoticeExists follows it in
-- the transaction.
UPDATE escalation_outbox SET next_attempt_at = CAST(sqlc.arg(next) AS INTEGER),
    last_status = nullif(CAST(sqlc.arg(status) AS INTEGER), 0), last_error = sqlc.arg(error)
 WHERE notice_id = sqlc.arg(id) AND delivered_at IS NULL;

-- name: EscalationNoticeGiveUp :exec
-- As EscalationNoticeFailed, but the retries stop.
UPDATE escalation_outbox SET gave_up_at = coalesce(gave_up_at, CAST(sqlc.arg(at) AS INTEGER)),
    last_status = nullif(CAST(sqlc.arg(status) AS INTEGER), 0), last_error = sqlc.arg(error)
 WHERE notice_id = sqlc.arg(id) AND delivered_at IS NULL;

-- name: EscalationNoticeExists :one
SELECT EXISTS (SELECT 1 FROM escalation_outbox WHERE notice_id = sqlc.arg(id));

-- name: EscalationNoticeGivenUpCount :one
SELECT count(*) FROM escalation_outbox
 WHERE tenant_id = sqlc.arg(tenant) AND gave_up_at IS NOT NULL AND delivered_at IS NULL;

-- name: EscalationNoticeGivenUpList :many
SELECT * FROM escalation_outbox
 WHERE tenant_id = sqlc.arg(tenant) AND gave_up_at IS NOT NULL AND delivered_at IS NULL
 ORDER BY gave_up_at DESC, notice_id DESC LIMIT CAST(sqlc.arg(max) AS INTEGER);

-- name: EscalationNoticeRetry :execrows
UPDATE escalation_outbox SET gave_up_at = NULL, attempts = 0, next_attempt_at = CAST(sqlc.arg(at) AS INTEGER)
 WHERE tenant_id = sqlc.arg(tenant) AND gave_up_at IS NOT NULL AND delivered_at IS NULL;

-- name: EscalationNoticeList :many
SELECT * FROM escalation_outbox
 WHERE tenant_id = sqlc.arg(tenant) AND operation_id = sqlc.arg(operation_id)
 ORDER BY notice_id;

-- name: DigestExists :one
SELECT EXISTS (SELECT 1 FROM escalation_digests WHERE team = sqlc.arg(team) AND day = sqlc.arg(day));

-- name: DigestInsert :exec
-- Recording a digest again keeps the first time.
INSERT INTO escalation_digests (team, day, sent_at) VALUES (sqlc.arg(team), sqlc.arg(day), CAST(sqlc.arg(at) AS INTEGER))
ON CONFLICT (team, day) DO NOTHING;
