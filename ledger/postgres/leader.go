package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"settle/ledger"
)

var _ ledger.LeaderStore = (*Store)(nil)

// AcquireLeader implements ledger.LeaderStore. One statement decides: the
// insert takes a free duty, and the conditional update takes an expired
// lease or renews the holder's own; a lease another replica still holds
// matches neither, and no row comes back.
func (s *Store) AcquireLeader(ctx context.Context, duty, holder string, ttl time.Duration) (bool, error) {
	if err := ledger.ValidateLeaderClaim(duty, holder, ttl); err != nil {
		return false, err
	}
	now := s.clock()
	var got string
	err := s.pool.QueryRow(ctx, `INSERT INTO leader (name, holder, elected_at, expires_at)
		VALUES ($1, $2, $3, $4)
		ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at,
			elected_at = CASE WHEN leader.holder = excluded.holder THEN leader.elected_at ELSE excluded.elected_at END
		WHERE leader.holder = excluded.holder OR leader.expires_at <= $3
		RETURNING holder`, duty, holder, now, now.Add(ttl)).Scan(&got)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("acquire leader %s: %w", duty, err)
	}
	return got == holder, nil
}

// ReleaseLeader implements ledger.LeaderStore.
func (s *Store) ReleaseLeader(ctx context.Context, duty, holder string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM leader WHERE name = $1 AND holder = $2`, duty, holder); err != nil {
		return fmt.Errorf("release leader %s: %w", duty, err)
	}
	return nil
}

// CurrentLeader implements ledger.LeaderStore.
func (s *Store) CurrentLeader(ctx context.Context, duty string) (ledger.Leader, error) {
	l := ledger.Leader{Duty: duty}
	err := s.pool.QueryRow(ctx, `SELECT holder, elected_at, expires_at FROM leader
		WHERE name = $1 AND expires_at > $2`, duty, s.clock()).Scan(&l.Holder, &l.ElectedAt, &l.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return ledger.Leader{}, ledger.Errorf(ledger.ENotFound, "nobody leads %s", duty)
	}
	if err != nil {
		return ledger.Leader{}, fmt.Errorf("current leader %s: %w", duty, err)
	}
	l.ElectedAt, l.ExpiresAt = l.ElectedAt.UTC(), l.ExpiresAt.UTC()
	return l, nil
}
