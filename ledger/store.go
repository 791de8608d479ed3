package ledger

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"
)

// Store is the durable ledger. Each method owns its transaction and is safe
// for concurrent use by many goroutines and processes. Every method that
// changes a state applies the transition table with one conditional statement
// and appends the matching event in the same transaction.
type Store interface {
	// Create inserts the operation, or returns the existing one for the same
	// (tenant, type, intent_ref) and payload hash with created=false. A
	// different hash under the same intent returns EPayloadConflict, records
	// the rejection and changes nothing else.
	Create(ctx context.Context, n NewOperation) (op Operation, created bool, err error)

	// Get returns one operation of the tenant, or ENotFound.
	Get(ctx context.Context, tenant, id string) (Operation, error)
	// Summary is Get without the payload: Payload is nil, PayloadHash is
	// set. The API reads operations this way, so that an answer costs the
	// same memory whatever the payload's size.
	Summary(ctx context.Context, tenant, id string) (Operation, error)
	// GetByIntent returns the operation for one business intent, or ENotFound.
	GetByIntent(ctx context.Context, tenant, opType, intentRef string) (Operation, error)
	// Find returns the tenant's operations whose id, intent reference,
	// remote key or remote reference equals ref (newest first, at most 50).
	Find(ctx context.Context, tenant, ref string) ([]Operation, error)
	// List returns one page of the tenant's operations, newest first, with
	// keyset pagination. Listed operations carry no Payload (PayloadHash is
	// set): a page of MaxListLimit rows stays small whatever the payloads.
	List(ctx context.Context, f ListFilter) (Page, error)
	// Events returns the operation's event log, oldest first.
	Events(ctx context.Context, tenant, id string) ([]Event, error)
	// PayloadConflicts counts rejected payload conflicts of the tenant in
	// the window w.
	PayloadConflicts(ctx context.Context, tenant string, w Window) (int, error)

	// Claim moves one PREPARED operation whose stored hash equals hash to
	// IN_FLIGHT, incrementing its fence and attempt count and setting a lease.
	// Any error means: do not send.
	Claim(ctx context.Context, tenant, id string, hash []byte, lease time.Duration) (Operation, error)
	// ClaimBatch claims up to n PREPARED operations, oldest first, skipping
	// rows another claimer holds. Each claim's lease is its target's in
	// byTarget, or lease for a target byTarget does not list. Each returned
	// operation is held by its fence and its payload has been verified
	// against its hash. EInvalid for a non-positive n or lease, or a target
	// listed twice.
	ClaimBatch(ctx context.Context, n int, lease time.Duration, byTarget ...TargetLease) ([]Operation, error)

	// Record applies an outcome if the caller still holds the current fence
	// and the operation is in o.From; otherwise EStaleFence and nothing
	// changes.
	Record(ctx context.Context, o Outcome) (Operation, error)
	// RecordBatch applies many outcomes in one transaction. errs[i] is nil
	// when outcomes[i] was applied, or the reason it was not.
	RecordBatch(ctx context.Context, outcomes []Outcome) (errs []error, err error)

	// SweepExpired moves IN_FLIGHT operations whose lease has expired to
	// UNKNOWN, due for reconciliation at once. It is idempotent and safe to
	// run concurrently in every replica.
	SweepExpired(ctx context.Context) (int, error)
	// LeaseUnknown leases up to n UNKNOWN operations that are due for
	// reconciliation and not leased by another reconciler. The fence is
	// incremented; the state stays UNKNOWN. Operations of the skipTargets
	// are left alone, due and untouched: the reconciler names the targets
	// whose concurrency it has used up, so a hung target's backlog waits
	// for a free slot (here or in another replica) instead of a batch.
	LeaseUnknown(ctx context.Context, n int, lease time.Duration, skipTargets ...string) ([]Operation, error)

	// Ping reports whether the database answers, for readiness checks.
	Ping(ctx context.Context) error
	// Close releases the store's connections.
	Close() error
}

// Actors written to the event log by settle's own components.
const (
	ActorAPI        = "api"
	ActorExecutor   = "executor"
	ActorSweeper    = "sweeper"
	ActorReconciler = "reconciler"
)

// Outcome is a fenced verdict about one operation.
type Outcome struct {
	Tenant      string
	OperationID string
	Fence       int64 // the fence returned by Claim or LeaseUnknown
	From        State // IN_FLIGHT for the sender, UNKNOWN for the reconciler
	To          State
	RemoteRef   string     // required for SUCCEEDED
	NextAt      *time.Time // when UNKNOWN is next reconciled; default now
	SentAt      *time.Time // set when the verdict followed a (re)send, e.g. a same-key replay
	// EndReplay ends the same-key replay window at the record's time (it
	// never moves it later): a later send was answered "this request did
	// nothing", and replaying into the same answer proves nothing more.
	// Only the reconciler sets it, from UNKNOWN.
	EndReplay bool
	Reason    string // short and payload-free
	Actor     string
	Evidence  map[string]any // status code, lookup summary; never the payload
}

// EvidenceJSON validates o against the transition table and the ledger's
// rules and returns its evidence encoded as JSON.
func (o Outcome) EvidenceJSON() ([]byte, error) {
	if !o.From.Valid() || !o.To.Valid() {
		return nil, Errorf(EInvalid, "unknown state %q → %q", o.From, o.To)
	}
	if o.From != InFlight && o.From != Unknown {
		return nil, Errorf(EInvalidTransition, "outcomes are recorded only from IN_FLIGHT or UNKNOWN, not %s", o.From)
	}
	if !CanTransition(o.From, o.To) {
		return nil, Errorf(EInvalidTransition, "%s → %s is not allowed", o.From, o.To)
	}
	if o.To == Succeeded && o.RemoteRef == "" {
		return nil, Errorf(EInvalid, "SUCCEEDED requires the remote reference confirmed by the target")
	}
	if o.RemoteRef != "" {
		// Defence in depth: the reconciler validates every id a target
		// returns, and a store must never be handed one its statement
		// would refuse (PostgreSQL: NUL in text, an over-long index entry).
		if err := CheckProviderText("remote_ref", o.RemoteRef); err != nil {
			return nil, err
		}
	}
	if o.EndReplay && o.From != Unknown {
		return nil, Errorf(EInvalid, "only the reconciler ends a replay window, from UNKNOWN")
	}
	if o.Actor == "" {
		return nil, Errorf(EInvalid, "actor is required")
	}
	if len(o.Reason) > 500 {
		return nil, Errorf(EInvalid, "reason must be at most 500 characters")
	}
	if !utf8.ValidString(o.Reason) || strings.ContainsRune(o.Reason, 0) {
		return nil, Errorf(EInvalid, "reason must be valid UTF-8 without NUL characters")
	}
	ev := o.Evidence
	if ev == nil {
		ev = map[string]any{}
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return nil, Errorf(EInvalid, "evidence is not JSON-encodable")
	}
	if len(b) > MaxEvidenceBytes {
		return nil, Errorf(EInvalid, "evidence exceeds %d bytes", MaxEvidenceBytes)
	}
	if hasEscapedNUL(b) {
		return nil, Errorf(EInvalid, "evidence must not contain NUL characters (PostgreSQL's jsonb refuses them)")
	}
	return b, nil
}

// hasEscapedNUL reports whether JSON text b holds the escape \u0000: one
// preceded by an odd number of backslashes in a row (an even number is an
// escaped backslash followed by the letters "u0000").
func hasEscapedNUL(b []byte) bool {
	for i := 0; ; {
		j := bytes.Index(b[i:], []byte(`\u0000`))
		if j < 0 {
			return false
		}
		j += i
		n := 0
		for k := j; k >= 0 && b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 1 {
			return true
		}
		i = j + 1
	}
}
