package ledger

import (
	"context"
	"time"
)

// EscalationStore keeps the durable queue of escalation notices to the
// owning teams of targets, and the record of the daily digests sent. Both
// stores implement it; the queue is filled by Record, RecordBatch and
// resolutions themselves, in the transaction that moves an operation to
// ESCALATED, whatever moved it there, so a committed escalation always has
// its notice. A notice reuses Notification: State is always ESCALATED and
// ID numbers notices, apart from callbacks.
type EscalationStore interface {
	// ClaimEscalationNotices returns up to n undelivered notices that are
	// due, oldest first, and pushes each one's next attempt lease into the
	// future, so that notifiers in other replicas skip it meanwhile.
	ClaimEscalationNotices(ctx context.Context, n int, lease time.Duration) ([]Notification, error)
	// MarkEscalationNoticeDelivered records the acknowledgement of a notice
	// (or that no endpoint wants it); it is never claimed again. Marking
	// twice keeps the first time. ENotFound for an unknown id.
	MarkEscalationNoticeDelivered(ctx context.Context, id int64, status int, now time.Time) error
	// MarkEscalationNoticeFailed records a failed attempt and when to try
	// again; it does nothing to a delivered notice. ENotFound for an
	// unknown id.
	MarkEscalationNoticeFailed(ctx context.Context, id int64, status int, errText string, next time.Time) error
	// GiveUpEscalationNotice records a last failed attempt and stops the
	// retries, as GiveUpNotification does for a callback: the notice stays
	// undelivered, is never claimed again and is listed by
	// GivenUpEscalationNotices until RetryGivenUpEscalationNotices. It does
	// nothing to a delivered notice. ENotFound for an unknown id.
	GiveUpEscalationNotice(ctx context.Context, id int64, status int, errText string, now time.Time) error
	// GivenUpEscalationNotices counts the given-up notices of the tenant's
	// operations and returns the latest limit of them.
	GivenUpEscalationNotices(ctx context.Context, tenant string, limit int) (GivenUp, error)
	// RetryGivenUpEscalationNotices makes the tenant's given-up notices due
	// at now with their attempts counted from zero again, returns how many,
	// and records the escalation_notice.retry action by the context's actor
	// (EInvalid without one, nothing changed).
	RetryGivenUpEscalationNotices(ctx context.Context, tenant string, now time.Time) (int, error)
	// EscalationNotices returns the notices of one operation, oldest first.
	EscalationNotices(ctx context.Context, tenant, operationID string) ([]Notification, error)
	// DigestSent reports whether team's digest for day (a UTC date,
	// YYYY-MM-DD) was recorded as sent.
	DigestSent(ctx context.Context, team, day string) (bool, error)
	// RecordDigest records team's digest for day as sent; recording it
	// again keeps the first time.
	RecordDigest(ctx context.Context, team, day string, now time.Time) error
}
