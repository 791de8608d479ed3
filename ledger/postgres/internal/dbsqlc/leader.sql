-- name: LeaderUpsert :one
-- Takes a free duty, an expired lease (excluded.elected_at is @now), or renews the holder's own; a lease
-- another holder still has matches neither, and no row comes back.
INSERT INTO leader (name, holder, elected_at, expires_at)
VALUES (@duty, @holder, @now, @expires_at)
ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at,
    elected_at = CASE WHEN leader.holder = excluded.holder THEN leader.elected_at ELSE excluded.elected_at END
WHERE leader.holder = excluded.holder OR leader.expires_at <= excluded.elected_at
RETURNING holder;

-- name: LeaderDelete :exec
DELETE FROM leader WHERE name = @duty AND holder = @holder;

-- name: LeaderLive :one
SELECT holder, elected_at, expires_at FROM leader WHERE name = @duty AND expires_at > @now;
