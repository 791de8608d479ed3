package ledger

import (
	"context"
	"fmt"
	"time"
)

// Leader is who holds the lease of one cluster-wide duty.
type Leader struct {
	Duty      string    // "auditor", "retention", …
	Holder    string    // the replica's id, as it gave it
	ElectedAt time.Time // when this holder took the lease (renewals keep it)
	ExpiresAt time.Time // when another replica may take it unless renewed
}

// LeaderStore keeps one lease per cluster-wide duty, so that work that
// must happen once per cluster (the auditor's walk, retention, digests)
// runs on one replica at a time while per-operation loops run in all of
// them. Both stores implement it; expiry is decided by the store's clock,
// so replicas whose clocks differ by more than a small fraction of the
// lease can briefly overlap, which every duty must tolerate (they do:
// their writes are conditional and idempotent, so the lease saves
// repeated work, not correctness).
type LeaderStore interface {
	// AcquireLeader makes holder the leader of duty until now+ttl when
	// nobody leads it, the current lease has expired, or holder already
	// leads it (a renewal). It reports whether holder leads the duty
	// after the call. EInvalid for an empty duty or holder or a ttl
	// under a millisecond.
	AcquireLeader(ctx context.Context, duty, holder string, ttl time.Duration) (bool, error)
	// ReleaseLeader gives up holder's lease of duty at once, so another
	// replica takes over at its next attempt rather than after expiry. Not
	// holding it is not an error.
	ReleaseLeader(ctx context.Context, duty, holder string) error
	// CurrentLeader returns the live lease of duty, or ENotFound when
	// nobody holds one (none taken, released, or expired).
	CurrentLeader(ctx context.Context, duty string) (Leader, error)
}

// ValidateLeaderClaim checks the arguments of AcquireLeader.
func ValidateLeaderClaim(duty, holder string, ttl time.Duration) error {
	switch {
	case duty == "" || len(duty) > 100:
		return Errorf(EInvalid, "a leader lease needs a duty name of 1-100 bytes")
	case holder == "" || len(holder) > 200:
		return Errorf(EInvalid, "a leader lease needs a holder id of 1-200 bytes")
	case ttl < time.Millisecond:
		return Errorf(EInvalid, "a leader lease lasts at least a millisecond, got %s", ttl)
	}
	return nil
}

var _ LeaderStore = (*Ledger)(nil)

// AcquireLeader implements LeaderStore: one statement decides, so two
// replicas racing for a free or expired lease cannot both take it.
func (l *Ledger) AcquireLeader(ctx context.Context, duty, holder string, ttl time.Duration) (bool, error) {
	if err := ValidateLeaderClaim(duty, holder, ttl); err != nil {
		return false, err
	}
	now := l.clock()
	taken, err := l.d.LeaderUpsert(ctx, LeaderUpsertParams{Duty: duty, Holder: holder, Now: now, ExpiresAt: now.Add(ttl)})
	if err != nil {
		return false, fmt.Errorf("acquire leader %s: %w", duty, err)
	}
	return taken, nil
}

// ReleaseLeader implements LeaderStore.
func (l *Ledger) ReleaseLeader(ctx context.Context, duty, holder string) error {
	if err := l.d.LeaderDelete(ctx, duty, holder); err != nil {
		return fmt.Errorf("release leader %s: %w", duty, err)
	}
	return nil
}

// CurrentLeader implements LeaderStore.
func (l *Ledger) CurrentLeader(ctx context.Context, duty string) (Leader, error) {
	got, found, err := l.d.LeaderLive(ctx, duty, l.clock())
	switch {
	case err != nil:
		return Leader{}, fmt.Errorf("current leader %s: %w", duty, err)
	case !found:
		return Leader{}, Errorf(ENotFound, "nobody leads %s", duty)
	}
	got.Duty = duty
	return got, nil
}
