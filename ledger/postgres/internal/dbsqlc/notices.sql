-- name: EscalationNoticeClaim :many
-- Oldest first; SKIP LOCKED keeps concurrent claimers apart.
WITH picked AS (
    SELECT notice_id FROM escalation_outbox
    WHERE delivered_at IS NULL AND gave_up_at IS NULL AND next_attempt_at <= sqlc.arg(now)::timestamptz
    ORDER BY next_attempt_at, notice_id LIMIT sqlc.arg(max)::int
    FOR UPDATE SKIP LOCKED
)
UPDATE escalation_outbox e SET attempts = e.attempts + 1, next_attempt_at = sqlc.arg(lease_until)::timestamptz
FROM picked p WHERE e.notice_id = p.notice_id
RETURNING e.*;

-- name: EscalationNoticeDelivered :execrows
-- A repeated acknowledgement keeps the first time.
UPDATE escalation_outbox SET delivered_at = coalesce(delivered_at, sqlc.arg(at)::timestamptz),
    last_status = sqlc.arg(status)::int, last_error = ''
 WHERE notice_id = sqlc.arg(id);

-- name: EscalationNoticeFailed :one
-- A delivered notice is left alone; found is whether the row exists.
WITH u AS (
    UPDATE escalation_outbox SET next_attempt_at = sqlc.arg(next)::timestamptz,
        last_status = nullif(sqlc.arg(status)::int, 0), last_error = sqlc.arg(error)::text
    WHERE notice_id = sqlc.arg(id) AND delivered_at IS NULL
)
SELECT EXISTS (SELECT 1 FROM escalation_outbox o WHERE o.notice_id = sqlc.arg(id)) AS found;

-- name: EscalationNoticeGiveUp :one
-- As EscalationNoticeFailed, but the retries stop.
WITH u AS (
    UPDATE escalation_outbox SET gave_up_at = coalesce(gave_up_at, sqlc.arg(at)::timestamptz),
        last_status = nullif(sqlc.arg(status)::int, 0), last_error = sqlc.arg(error)::text
    WHERE notice_id = sqlc.arg(id) AND delivered_at IS NULL
)
SELECT EXISTS (SELECT 1 FROM escalation_outbox o WHERE o.notice_id = sqlc.arg(id)) AS found;

-- name: EscalationNoticeGivenUpCount :one
SELECT count(*) FROM escalation_outbox
 WHERE tenant_id = sqlc.arg(tenant) AND gave_up_at IS NOT NULL AND delivered_at IS NULL;

-- name: EscalationNoticeGivenUpList :many
SELECT * FROM escalation_outbox
 WHERE tenant_id = sqlc.arg(tenant) AND gave_up_at IS NOT NULL AND delivered_at IS NULL
 ORDER BY gave_up_at DESC, notice_id DESC LIMIT sqlc.arg(max)::int;

-- name: EscalationNoticeRetry :execrows
UPDATE escalation_outbox SET gave_up_at = NULL, attempts = 0, next_attempt_at = sqlc.arg(at)::timestamptz
 WHERE tenant_id = sqlc.arg(tenant) AND gave_up_at IS NOT NULL AND delivered_at IS NULL;

-- name: EscalationNoticeList :many
SELECT * FROM escalation_outbox
 WHERE tenant_id = sqlc.arg(tenant) AND operation_id = sqlc.arg(operation_id)::text::uuid
 ORDER BY notice_id;

-- name: DigestExists :one
SELECT EXISTS (SELECT 1 FROM escalation_digests WHERE team = sqlc.arg(team) AND day = sqlc.arg(day)::date);

-- name: DigestInsert :exec
-- Recording a digest again keeps the first time.
INSERT INTO escalation_digests (team, day, sent_at) VALUES (sqlc.arg(team), sqlc.arg(day)::date, sqlc.arg(at)::timestamptz)
ON CONFLICT (team, day) DO NOTHING;
