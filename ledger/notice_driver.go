package ledger

import (
	"context"
	"time"
)

// Outbox names a durable queue of deliveries. The queues share the columns
// of delivery (attempts, next attempt, delivered, given up, last status and
// error), so one set of primitives serves them all.
type Outbox int

const (
	// OutboxCallbacks is tenants' client notifications (CallbackStore).
	OutboxCallbacks Outbox = iota + 1
	// OutboxEscalations is the owning teams' notices of escalations
	// (EscalationStore); a notice's State is always ESCALATED.
	OutboxEscalations
)

// String is how errors name one of the queue's rows.
func (o Outbox) String() string {
	switch o {
	case OutboxCallbacks:
		return "notification"
	case OutboxEscalations:
		return "escalation notice"
	}
	return "delivery"
}

// retry is the action that queues the given-up rows of o again.
func (o Outbox) retry() ActionKind {
	if o == OutboxEscalations {
		return ActionEscalationNoticeRetry
	}
	return ActionCallbackRetry
}

// NoticeDriver is the SQL of the delivery queues (Outbox) and of the
// escalation digests sent. A row is due
// when it is neither delivered nor given up and its next attempt is not
// after now; given up means given up and not delivered.
type NoticeDriver interface {
	// OutboxClaim counts an attempt of up to p.Max due rows of p.Outbox
	// and sets their next attempt to p.LeaseUntil, passing over rows
	// another transaction is claiming, and returns them as claimed. The
	// callbacks are taken fairly across tenants: rank by rank of each
	// tenant's due rows in next-attempt order; the escalation notices
	// oldest first.
	OutboxClaim(ctx context.Context, p OutboxClaimParams) ([]Notification, error)
	// OutboxDelivered sets row p.ID's delivery time to p.At unless it has
	// one, its last status to p.Status and clears its last error; found
	// is false when there is no such row.
	OutboxDelivered(ctx context.Context, p OutboxMarkParams) (found bool, err error)
	// OutboxFailed sets the next attempt of row p.ID to p.At, its last
	// status to p.Status (0: none) and its last error to p.Error, unless
	// it is delivered; found is false when there is no such row.
	OutboxFailed(ctx context.Context, p OutboxMarkParams) (found bool, err error)
	// OutboxGiveUp is OutboxFailed that sets the row's given-up time to
	// p.At, unless it has one, instead of its next attempt.
	OutboxGiveUp(ctx context.Context, p OutboxMarkParams) (found bool, err error)
	// OutboxGivenUpCount counts the tenant's given-up rows.
	OutboxGivenUpCount(ctx context.Context, o Outbox, tenant string) (int, error)
	// OutboxGivenUpList returns the tenant's given-up rows, latest given
	// up first, at most max.
	OutboxGivenUpList(ctx context.Context, o Outbox, tenant string, max int) ([]Notification, error)
	// OutboxRetry makes the tenant's given-up rows due at at, their
	// attempts counted from zero, and returns how many.
	OutboxRetry(ctx context.Context, o Outbox, tenant string, at time.Time) (int, error)
	// OutboxList returns the rows of one operation, oldest first.
	OutboxList(ctx context.Context, o Outbox, tenant, operationID string) ([]Notification, error)

	// DigestExists reports whether team's digest for day (a UTC date) is
	// recorded.
	DigestExists(ctx context.Context, team string, day time.Time) (bool, error)
	// DigestInsert records team's digest for day as sent at p.At, unless
	// it is recorded already.
	DigestInsert(ctx context.Context, p DigestInsertParams) error
}

// DigestInsertParams are DigestInsert's; Day is a UTC date.
type DigestInsertParams struct {
	Team    string
	Day, At time.Time
}

// OutboxClaimParams are OutboxClaim's.
type OutboxClaimParams struct {
	Outbox          Outbox
	Now, LeaseUntil time.Time
	Max             int
	// SkipTenants are tenants whose rows are passed over (callbacks only);
	// never nil.
	SkipTenants []string
}

// OutboxMarkParams are what OutboxDelivered, OutboxFailed and OutboxGiveUp
// write to row ID of Outbox; At is when it was delivered or given up, or
// its next attempt (OutboxFailed).
type OutboxMarkParams struct {
	Outbox Outbox
	ID     int64
	At     time.Time
	Status int
	Error  string
}
