package ledger

import (
	"context"
	"errors"
	"time"
)

// Driver is what a dialect provides under Ledger: SQL primitives that take
// …Params structs and return rows, and nothing a reviewer would call a
// rule. Ledger holds the rules — validation, the order of the steps, the
// errors a caller sees — written once for both dialects.
//
// The store is moving onto Ledger one aggregate at a time (issue 26); until
// every method has moved, each dialect's Store embeds a *Ledger over its
// Driver, so the methods that have moved are promoted from Ledger and the
// others are still the Store's own.
type Driver interface {
	LeaderDriver
	DrillDriver
	SessionDriver
	CallbackDriver
	NoticeDriver
	TenantDriver
	ActionDriver
	QuarantineDriver
	InboxDriver
	ReviewDriver
	AuditDriver
	RetentionDriver
	ParamDriver
	ObservationDriver
	GaugeDriver
	FigureDriver
	OperationDriver
	ReadDriver
	ResolutionDriver
	CreateDriver
	TransitionDriver
	// WithTx runs fn with a Driver whose primitives all run in one
	// transaction, committed when fn returns nil and rolled back
	// otherwise. Inside it, WithTx runs fn in the same transaction.
	WithTx(ctx context.Context, fn func(tx Driver) error) error
}

// CallbackDriver is the SQL of tenants' callback endpoints and their
// delivery status.
type CallbackDriver interface {
	// CallbackUpsert creates the tenant's endpoint or replaces its URL and
	// secret; either way its delivery status starts afresh.
	CallbackUpsert(ctx context.Context, p CallbackUpsertParams) error
	// CallbackDelete deletes the tenant's endpoint and its undelivered
	// notifications, and returns the URL it had; found is false when it
	// had none.
	CallbackDelete(ctx context.Context, tenant string) (url string, found bool, err error)
	// CallbackGet returns the tenant's endpoint; found is false when it has
	// none.
	CallbackGet(ctx context.Context, tenant string) (c Callback, found bool, err error)
	// CallbackAttemptRecord records an attempt of notification p.ID in its
	// tenant's delivery status, unless a later attempt is recorded there.
	CallbackAttemptRecord(ctx context.Context, p CallbackAttempt) error
	// CallbackDeliveryGet reads the tenant's delivery status, counting
	// pending notifications up to maxPending; found is false when the
	// tenant has no endpoint.
	CallbackDeliveryGet(ctx context.Context, tenant string, maxPending int) (d CallbackDelivery, found bool, err error)
}

// CallbackUpsertParams are CallbackUpsert's; At is the creation or
// update time.
type CallbackUpsertParams struct {
	Tenant, URL string
	Secret      []byte
	At          time.Time
}

// CallbackAttempt is one delivery attempt of notification ID: when, the
// HTTP status that came back (0: none), and the reason it failed ("" when
// OK).
type CallbackAttempt struct {
	ID     int64
	At     time.Time
	Status int
	Error  string
	OK     bool
}

// ErrDuplicateKey is what a driver returns when an insert would repeat a
// unique key; Ledger says what that means to its caller.
var ErrDuplicateKey = errors.New("duplicate key")

// SessionDriver is console_sessions' SQL (SessionStore, SessionLister,
// PersonStore). A live session is one whose idle and absolute expiries
// are both after now; found is false when no row matched.
type SessionDriver interface {
	// SessionInsert inserts s; ErrDuplicateKey when its id hash is taken.
	SessionInsert(ctx context.Context, s Session) error
	SessionGet(ctx context.Context, idHash []byte, now time.Time) (s Session, found bool, err error)
	// SessionTouch sets the live session's last use to p.Now and its idle
	// expiry to p.IdleExpiresAt, capped at its absolute expiry.
	SessionTouch(ctx context.Context, p SessionTouchParams) (s Session, found bool, err error)
	SessionDelete(ctx context.Context, idHash []byte) error
	SessionDeleteBySubject(ctx context.Context, subject string) (int, error)
	// SessionDeleteExpired deletes the sessions expired (idle or
	// absolutely) at now.
	SessionDeleteExpired(ctx context.Context, now time.Time) (int, error)
	// SessionList returns live sessions of p.Subject ("" for everyone's),
	// subject then newest first, at most p.Max.
	SessionList(ctx context.Context, p SessionListParams) ([]Session, error)
	// PersonKnown reports whether subject has a session row or a console
	// action in tenant.
	PersonKnown(ctx context.Context, tenant, subject string) (bool, error)
}

// SessionTouchParams are SessionTouch's.
type SessionTouchParams struct {
	IDHash             []byte
	Now, IdleExpiresAt time.Time
}

// SessionListParams are SessionList's.
type SessionListParams struct {
	Now     time.Time
	Subject string
	Max     int
}

// DrillDriver is drill_results' SQL (DrillStore).
type DrillDriver interface {
	// DrillInsert inserts rows in one transaction: all or none.
	DrillInsert(ctx context.Context, rows []DrillRow) error
	// DrillLatest returns the rows of the target's newest run, by test
	// number; none when the target was never drilled.
	DrillLatest(ctx context.Context, target string) ([]DrillRow, error)
}

// DrillRow is one row of drill_results: a DrillResult with its evidence
// encoded as a JSON object.
type DrillRow struct {
	RunID, Target, Name, Reason, Version string
	Number                               int
	Passed, NotApplicable                bool
	Evidence                             []byte
	RanAt                                time.Time
}

// LeaderDriver is the leader lease's SQL (LeaderStore).
type LeaderDriver interface {
	// LeaderUpsert makes p.Holder the holder of p.Duty until p.ExpiresAt
	// when nobody holds it, the lease expired by p.Now, or p.Holder holds
	// it already (a renewal keeps ElectedAt). It reports whether the row
	// was taken; false when another holder's live lease stopped it.
	LeaderUpsert(ctx context.Context, p LeaderUpsertParams) (bool, error)
	// LeaderDelete removes duty's row when holder holds it.
	LeaderDelete(ctx context.Context, duty, holder string) error
	// LeaderLive returns duty's lease if it is live at now; found is false
	// when there is none.
	LeaderLive(ctx context.Context, duty string, now time.Time) (l Leader, found bool, err error)
}

// LeaderUpsertParams are LeaderDriver.LeaderUpsert's.
type LeaderUpsertParams struct {
	Duty, Holder   string
	Now, ExpiresAt time.Time
}

// Ledger is the durable ledger's rules over a dialect's Driver.
type Ledger struct {
	d        Driver
	now      func() time.Time
	observer Observer   // told what each committed write of events wrote
	group    *committer // nil inside a transaction of the caller's (Within)
}

// SetObserver makes o the observer the Ledger tells, after each commit,
// the transitions and refusals it wrote (nil: nobody). Set it once, right
// after the store is opened, before it is used.
func (l *Ledger) SetObserver(o Observer) { l.observer = o }

// New returns the Ledger over d. now is the clock of every lease, deadline
// and timestamp (nil means time.Now); times are UTC to the microsecond,
// which both dialects store exactly.
func New(d Driver, now func() time.Time) *Ledger {
	if now == nil {
		now = time.Now
	}
	l := &Ledger{d: d, now: now}
	l.group = &committer{insert: l.insertBatch}
	return l
}

// Within returns the Ledger over tx, a Driver in a transaction its caller
// holds and commits (a transactional outbox): its creations are written in
// that transaction, one by one, never group-committed, and nobody is told
// of them, since they are not committed yet.
func (l *Ledger) Within(tx Driver) *Ledger { return &Ledger{d: tx, now: l.now} }

// clock is the current time as the ledger stores it.
func (l *Ledger) clock() time.Time { return l.now().UTC().Truncate(time.Microsecond) }
