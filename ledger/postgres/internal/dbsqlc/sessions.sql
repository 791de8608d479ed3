-- name: SessionInsert :exec
INSERT INTO console_sessions (session_hash, subject, name, email, claims, created_at, last_seen_at, idle_expires_at, expires_at)
VALUES (@session_hash, @subject, @name, @email, @claims, @created_at, @last_seen_at, @idle_expires_at, @expires_at);

-- name: SessionGet :one
SELECT session_hash, subject, name, email, claims, created_at, last_seen_at, idle_expires_at, expires_at
FROM console_sessions
WHERE session_hash = @session_hash AND idle_expires_at > @now AND expires_at > @now;

-- name: SessionTouch :one
UPDATE console_sessions
SET last_seen_at = @now, idle_expires_at = least(@idle_expires_at, expires_at)
WHERE session_hash = @session_hash AND idle_expires_at > @now AND expires_at > @now
RETURNING session_hash, subject, name, email, claims, created_at, last_seen_at, idle_expires_at, expires_at;

-- name: SessionDelete :exec
DELETE FROM console_sessions WHERE session_hash = @session_hash;

-- name: SessionDeleteBySubject :execrows
DELETE FROM console_sessions WHERE subject = @subject;

-- name: SessionDeleteExpired :execrows
-- Idle-expired rows go too; the absolute expiry's index finds the rest over time.
DELETE FROM console_sessions WHERE expires_at <= @now OR idle_expires_at <= @now;

-- name: SessionList :many
-- Sessions belong to people, not tenants: the table has no tenant to filter on.
SELECT session_hash, subject, name, email, claims, created_at, last_seen_at, idle_expires_at, expires_at
FROM console_sessions
WHERE idle_expires_at > @now AND expires_at > @now AND (@subject::text = '' OR subject = @subject::text)
ORDER BY subject, created_at DESC, session_hash
LIMIT @max_rows;

-- name: PersonKnown :one
-- A session row (only a verified sign-in writes one) or a console action in the tenant.
SELECT EXISTS (SELECT 1 FROM console_sessions s WHERE s.subject = @subject)
    OR EXISTS (SELECT 1 FROM actions a WHERE a.tenant_id = @tenant AND a.subject = @subject);
