package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"settle/ledger"
)

var _ ledger.LeaderStore = (*Store)(nil)

// AcquireLeader implements ledger.LeaderStore, with the PostgreSQL store's
// statement: several processes may share one SQLite file, and the single
// writer serialises their attempts.
func (s *Store) AcquireLeader(ctx context.Context, duty, holder string, ttl time.Duration) (bool, error) {
	if err := ledger.ValidateLeaderClaim(duty, holder, ttl); err != nil {
		return false, err
	}
	now := s.clock()
	var got string
	err := s.w.QueryRowContext(ctx, `INSERT INTO leader (name, holder, elected_at, expires_at)
		VALUES (?1, ?2, ?3, ?4)
		ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at,
			elected_at = CASE WHEN leader.holder = excluded.holder THEN leader.elected_at ELSE excluded.elected_at END
		WHERE leader.holder = excluded.holder OR leader.expires_at <= ?3
		RETURNING holder`, duty, holder, micros(now), micros(now.Add(ttl))).Scan(&got)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("acquire leader %s: %w", duty, err)
	}
	return got == holder, nil
}

// ReleaseLeader implements ledger.LeaderStore.
func (s *Store) ReleaseLeader(ctx context.Context, duty, holder string) error {
	if _, err := s.w.ExecContext(ctx, `DELETE FROM leader WHERE name = ?1 AND holder = ?2`, duty, holder); err != nil {
		return fmt.Errorf("release leader %s: %w", duty, err)
	}
	return nil
}

// CurrentLeader implements ledger.LeaderStore.
func (s *Store) CurrentLeader(ctx context.Context, duty string) (ledger.Leader, error) {
	l := ledger.Leader{Duty: duty}
	var elected, expires int64
	err := s.r.QueryRowContext(ctx, `SELECT holder, elected_at, expires_at FROM leader
		WHERE name = ?1 AND expires_at > ?2`, duty, micros(s.clock())).Scan(&l.Holder, &elected, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return ledger.Leader{}, ledger.Errorf(ledger.ENotFound, "nobody leads %s", duty)
	}
	if err != nil {
		return ledger.Leader{}, fmt.Errorf("current leader %s: %w", duty, err)
	}
	l.ElectedAt, l.ExpiresAt = fromMicros(elected), fromMicros(expires)
	return l, nil
}
