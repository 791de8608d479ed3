package ledger

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
)

var (
	_ CallbackStore   = (*Ledger)(nil)
	_ EscalationStore = (*Ledger)(nil)
)

// micro is t as the ledger stores it: UTC, to the microsecond.
func micro(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// SetCallback implements CallbackStore.
func (l *Ledger) SetCallback(ctx context.Context, tenant, url string, secret []byte, now time.Time) error {
	if err := ValidateCallback(tenant, url, secret); err != nil {
		return err
	}
	p := CallbackUpsertParams{Tenant: tenant, URL: url, Secret: secret, At: micro(now)}
	err := l.withAction(ctx, ActionCallbackSet, tenant, tenant, func(tx Driver, a *Action) error {
		a.Reason = CallbackActionURL(url)
		return tx.CallbackUpsert(ctx, p)
	})
	if err != nil {
		return fmt.Errorf("set callback: %w", err)
	}
	return nil
}

// RemoveCallback implements CallbackStore.
func (l *Ledger) RemoveCallback(ctx context.Context, tenant string) error {
	err := l.withAction(ctx, ActionCallbackRemove, tenant, tenant, func(tx Driver, a *Action) error {
		removed, found, err := tx.CallbackDelete(ctx, tenant)
		if err != nil {
			return err
		}
		if !found {
			return noCallback(tenant)
		}
		// The record names the endpoint that went, never its secret.
		a.Reason = CallbackActionURL(removed)
		return nil
	})
	if err != nil {
		return fmt.Errorf("remove callback: %w", err)
	}
	return nil
}

func noCallback(tenant string) error {
	return Errorf(ENotFound, "no callback configured for tenant %s", tenant)
}

// GetCallback implements CallbackStore.
func (l *Ledger) GetCallback(ctx context.Context, tenant string) (Callback, error) {
	c, found, err := l.d.CallbackGet(ctx, tenant)
	switch {
	case err != nil:
		return Callback{}, fmt.Errorf("get callback: %w", err)
	case !found:
		return Callback{}, noCallback(tenant)
	}
	return c, nil
}

// ClaimNotifications implements CallbackStore.
func (l *Ledger) ClaimNotifications(ctx context.Context, n int, lease time.Duration, skipTenants ...string) ([]Notification, error) {
	ns, err := l.claim(ctx, OutboxCallbacks, n, lease, skipTenants...)
	if err != nil {
		return nil, fmt.Errorf("claim notifications: %w", err)
	}
	return ns, nil
}

// MarkDelivered implements CallbackStore, and notes the attempt in the
// tenant's delivery status.
func (l *Ledger) MarkDelivered(ctx context.Context, id int64, status int, now time.Time) error {
	if err := l.markDelivered(ctx, OutboxCallbacks, id, status, now); err != nil {
		return err
	}
	return l.NoteCallbackAttempt(ctx, CallbackAttempt{ID: id, At: now, Status: status, OK: true})
}

// MarkFailed implements CallbackStore, and notes the attempt in the
// tenant's delivery status.
func (l *Ledger) MarkFailed(ctx context.Context, id int64, status int, errText string, next time.Time) error {
	if err := l.markFailed(ctx, OutboxCallbacks, id, status, errText, next); err != nil {
		return err
	}
	return l.NoteCallbackAttempt(ctx, CallbackAttempt{ID: id, At: l.clock(), Status: status, Error: errText})
}

// GiveUpNotification implements CallbackStore, and notes the attempt in
// the tenant's delivery status.
func (l *Ledger) GiveUpNotification(ctx context.Context, id int64, status int, errText string, now time.Time) error {
	if err := l.giveUp(ctx, OutboxCallbacks, id, status, errText, now); err != nil {
		return err
	}
	return l.NoteCallbackAttempt(ctx, CallbackAttempt{ID: id, At: now, Status: status, Error: errText})
}

// GivenUpNotifications implements CallbackStore.
func (l *Ledger) GivenUpNotifications(ctx context.Context, tenant string, limit int) (GivenUp, error) {
	return l.givenUp(ctx, OutboxCallbacks, tenant, limit)
}

// RetryGivenUp implements CallbackStore.
func (l *Ledger) RetryGivenUp(ctx context.Context, tenant string, now time.Time) (int, error) {
	return l.retryGivenUp(ctx, OutboxCallbacks, tenant, now)
}

// Notifications implements CallbackStore.
func (l *Ledger) Notifications(ctx context.Context, tenant, operationID string) ([]Notification, error) {
	ns, err := l.list(ctx, OutboxCallbacks, tenant, operationID)
	if err != nil {
		return nil, fmt.Errorf("notifications: %w", err)
	}
	return ns, nil
}

// ClaimEscalationNotices implements EscalationStore.
func (l *Ledger) ClaimEscalationNotices(ctx context.Context, n int, lease time.Duration) ([]Notification, error) {
	ns, err := l.claim(ctx, OutboxEscalations, n, lease)
	if err != nil {
		return nil, fmt.Errorf("claim escalation notices: %w", err)
	}
	return ns, nil
}

// MarkEscalationNoticeDelivered implements EscalationStore.
func (l *Ledger) MarkEscalationNoticeDelivered(ctx context.Context, id int64, status int, now time.Time) error {
	return l.markDelivered(ctx, OutboxEscalations, id, status, now)
}

// MarkEscalationNoticeFailed implements EscalationStore. A delivered
// notice is left alone.
func (l *Ledger) MarkEscalationNoticeFailed(ctx context.Context, id int64, status int, errText string, next time.Time) error {
	return l.markFailed(ctx, OutboxEscalations, id, status, errText, next)
}

// GiveUpEscalationNotice implements EscalationStore.
func (l *Ledger) GiveUpEscalationNotice(ctx context.Context, id int64, status int, errText string, now time.Time) error {
	return l.giveUp(ctx, OutboxEscalations, id, status, errText, now)
}

// GivenUpEscalationNotices implements EscalationStore.
func (l *Ledger) GivenUpEscalationNotices(ctx context.Context, tenant string, limit int) (GivenUp, error) {
	return l.givenUp(ctx, OutboxEscalations, tenant, limit)
}

// RetryGivenUpEscalationNotices implements EscalationStore.
func (l *Ledger) RetryGivenUpEscalationNotices(ctx context.Context, tenant string, now time.Time) (int, error) {
	return l.retryGivenUp(ctx, OutboxEscalations, tenant, now)
}

// EscalationNotices implements EscalationStore.
func (l *Ledger) EscalationNotices(ctx context.Context, tenant, operationID string) ([]Notification, error) {
	ns, err := l.list(ctx, OutboxEscalations, tenant, operationID)
	if err != nil {
		return nil, fmt.Errorf("escalation notices: %w", err)
	}
	return ns, nil
}

// DigestSent implements EscalationStore; EInvalid for a day that is not
// YYYY-MM-DD.
func (l *Ledger) DigestSent(ctx context.Context, team, day string) (bool, error) {
	d, err := time.Parse(time.DateOnly, day)
	if err != nil {
		return false, Errorf(EInvalid, "a digest day is YYYY-MM-DD")
	}
	sent, err := l.d.DigestExists(ctx, team, d)
	if err != nil {
		return false, fmt.Errorf("digest sent: %w", err)
	}
	return sent, nil
}

// RecordDigest implements EscalationStore; EInvalid without a team or for
// a day that is not YYYY-MM-DD.
func (l *Ledger) RecordDigest(ctx context.Context, team, day string, now time.Time) error {
	d, err := time.Parse(time.DateOnly, day)
	if err != nil || team == "" {
		return Errorf(EInvalid, "a digest needs a team and a YYYY-MM-DD day")
	}
	if err := l.d.DigestInsert(ctx, DigestInsertParams{Team: team, Day: d, At: micro(now)}); err != nil {
		return fmt.Errorf("record digest: %w", err)
	}
	return nil
}

// claim takes up to n due rows of o for lease.
func (l *Ledger) claim(ctx context.Context, o Outbox, n int, lease time.Duration, skipTenants ...string) ([]Notification, error) {
	if lease <= 0 || n <= 0 {
		return nil, Errorf(EInvalid, "batch size and lease must be positive")
	}
	if skipTenants == nil {
		skipTenants = []string{}
	}
	now := l.clock()
	return l.d.OutboxClaim(ctx, OutboxClaimParams{Outbox: o, Now: now, LeaseUntil: now.Add(lease), Max: n,
		SkipTenants: skipTenants})
}

// markDelivered records the acknowledgement of one delivery; a repeated
// acknowledgement keeps the first time.
func (l *Ledger) markDelivered(ctx context.Context, o Outbox, id int64, status int, now time.Time) error {
	found, err := l.d.OutboxDelivered(ctx, OutboxMarkParams{Outbox: o, ID: id, At: micro(now), Status: status})
	if err != nil {
		return fmt.Errorf("mark %s delivered: %w", o, err)
	}
	if !found {
		return Errorf(ENotFound, "%s not found", o)
	}
	return nil
}

// markFailed schedules the next attempt of one delivery. A delivered row is
// left alone: a late failure report from a sender whose lease ran out must
// not undo another's acknowledgement.
func (l *Ledger) markFailed(ctx context.Context, o Outbox, id int64, status int, errText string, next time.Time) error {
	found, err := l.d.OutboxFailed(ctx, OutboxMarkParams{Outbox: o, ID: id, At: micro(next), Status: status,
		Error: TrimCallbackError(errText)})
	if err != nil {
		return fmt.Errorf("mark %s failed: %w", o, err)
	}
	if !found {
		return Errorf(ENotFound, "%s not found", o)
	}
	return nil
}

// giveUp records the last failed attempt of one delivery and stops its
// retries. Like markFailed it leaves a delivered row alone.
func (l *Ledger) giveUp(ctx context.Context, o Outbox, id int64, status int, errText string, now time.Time) error {
	found, err := l.d.OutboxGiveUp(ctx, OutboxMarkParams{Outbox: o, ID: id, At: micro(now), Status: status,
		Error: TrimCallbackError(errText)})
	if err != nil {
		return fmt.Errorf("give up %s: %w", o, err)
	}
	if !found {
		return Errorf(ENotFound, "%s not found", o)
	}
	return nil
}

// givenUp counts a tenant's given-up deliveries and reads the latest limit.
func (l *Ledger) givenUp(ctx context.Context, o Outbox, tenant string, limit int) (GivenUp, error) {
	var g GivenUp
	n, err := l.d.OutboxGivenUpCount(ctx, o, tenant)
	if err != nil {
		return g, fmt.Errorf("given-up %ss: %w", o, err)
	}
	g.Count = n
	if n == 0 || limit <= 0 {
		return g, nil
	}
	if g.Latest, err = l.d.OutboxGivenUpList(ctx, o, tenant, limit); err != nil {
		return g, fmt.Errorf("given-up %ss: %w", o, err)
	}
	return g, nil
}

// retryGivenUp makes a tenant's given-up deliveries due at now, their
// attempts counted from zero again, and records o's retry action by the
// context's actor with how many (EInvalid without an actor).
func (l *Ledger) retryGivenUp(ctx context.Context, o Outbox, tenant string, now time.Time) (int, error) {
	var n int
	err := l.withAction(ctx, o.retry(), tenant, tenant, func(tx Driver, a *Action) error {
		var err error
		if n, err = tx.OutboxRetry(ctx, o, tenant, micro(now)); err != nil {
			return err
		}
		a.Reason = fmt.Sprintf("%d queued again", n)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("retry given-up %ss: %w", o, err)
	}
	return n, nil
}

// list returns the rows of o of one operation; none when operationID is no
// UUID, which names no operation.
func (l *Ledger) list(ctx context.Context, o Outbox, tenant, operationID string) ([]Notification, error) {
	if uuid.Validate(operationID) != nil {
		return nil, nil
	}
	return l.d.OutboxList(ctx, o, tenant, operationID)
}
