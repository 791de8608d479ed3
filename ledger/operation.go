// Package ledger is settle's domain: the durable, tenant-scoped operation
// ledger of the design paper. It holds the Operation type, its states and the
// one transition table, the error type, payload canonicalisation and the Store
// interface that the PostgreSQL and SQLite adapters implement. It imports no
// SQL driver, HTTP or template code.
package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/google/uuid"
)

// Operation is one consequential outbound call and everything the ledger
// knows about it.
type Operation struct {
	Tenant    string // tenant name; every query is scoped by it
	ID        string // random UUIDv4, generated once at creation
	Type      string // operation type, e.g. "charge"
	IntentRef string // the business intent, e.g. the approval record id
	Target    string // name of the target contract

	Payload     []byte // RFC 8785 canonical approved payload: the bytes sent
	PayloadHash []byte // SHA-256 of Payload
	RemoteKey   string // random UUIDv4 sent as the idempotency key / reference

	State    State
	Fence    int64 // incremented by every claim and reconciler lease
	Attempts int   // number of sender claims

	LeaseExpiresAt *time.Time // set while a worker or reconciler holds it
	RemoteRef      string     // the target's object id, once confirmed
	// RetryWindow is the target's documented idempotency-key retention,
	// stored at creation. Zero: no same-key replay is ever safe.
	RetryWindow time.Duration
	// FirstClaimedAt is when the operation was first claimed for sending;
	// nil while PREPARED (and for operations claimed before settle recorded
	// it). The replay window starts here: a claim precedes the send, so the
	// ledger's window ends no later than the target's.
	FirstClaimedAt *time.Time
	// RetryWindowEnd is the end of the same-key replay window:
	// FirstClaimedAt + RetryWindow once claimed. Before the first claim it
	// is the provisional CreatedAt + RetryWindow, which no replay can use
	// since nothing has been sent. It only ever moves earlier afterwards.
	RetryWindowEnd  time.Time
	Deadline        *time.Time // after it an unresolved operation escalates
	NextReconcileAt *time.Time // when the reconciler may next look at it
	LastSentAt      *time.Time // the last claim or same-key replay
	Reason          string     // short, payload-free reason for the state

	CreatedAt time.Time
	UpdatedAt time.Time
}

// NewOperation is what a caller supplies to create an operation.
type NewOperation struct {
	Tenant    string
	Type      string
	IntentRef string
	Target    string
	Payload   []byte // any JSON object; canonicalised by Prepare
	Deadline  *time.Time
	// RetryWindow is the target's documented idempotency-key retention. Zero
	// (undocumented) means no same-key replay is ever considered safe.
	RetryWindow time.Duration
	// Bind, when set, writes the operation's own references into the
	// payload before it is canonicalised and hashed (for example the remote
	// key into the field the target's contract names), so the remote object
	// carries them. It must be deterministic in its inputs. A *Error it
	// returns (EInvalid: the payload clashes with a field it writes) is the
	// caller's answer; any other error is internal.
	Bind func(payload []byte, remoteKey, tenant string) ([]byte, error)
}

// Event is one row of the append-only event log. From is empty for the
// creation event.
type Event struct {
	ID          int64
	Tenant      string
	OperationID string
	From        State
	To          State
	Fence       int64
	Actor       string
	Reason      string
	Evidence    []byte // small JSON object; never the payload
	At          time.Time
}

// MaxEvidenceBytes bounds an event's evidence so that nobody stores a
// payload or a response body in the event log by accident.
const MaxEvidenceBytes = 4096

var (
	tenantRe = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)
	nameRe   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$`)
)

// ValidTenant reports whether s is an acceptable tenant name: lower-case
// letters, digits, '.', '_' and '-', at most 63 characters.
func ValidTenant(s string) bool { return tenantRe.MatchString(s) }

// Prepare validates n, canonicalises its payload and returns the operation to
// insert, with fresh random identifiers. It does not touch any store.
func Prepare(n NewOperation, now time.Time) (Operation, error) {
	if err := CheckText("intent_ref", n.IntentRef, MaxIntentRef); err != nil {
		return Operation{}, err
	}
	switch {
	case !ValidTenant(n.Tenant):
		return Operation{}, Errorf(EInvalid, "tenant must be 1-63 characters of a-z, 0-9, '.', '_' or '-'")
	case !nameRe.MatchString(n.Type):
		return Operation{}, Errorf(EInvalid, "operation_type must be 1-%d characters of ASCII letters, digits and . _ : / -", MaxOperationType)
	case !nameRe.MatchString(n.Target):
		return Operation{}, Errorf(EInvalid, "target must be 1-128 characters of letters, digits and . _ : / -")
	case n.RetryWindow < 0:
		return Operation{}, Errorf(EInvalid, "retry window must not be negative")
	}
	if n.Deadline != nil && !n.Deadline.After(now) {
		return Operation{}, Errorf(EInvalid, "deadline must be in the future")
	}
	remoteKey := uuid.NewString()
	canonical, hash, err := bindPayload(n, remoteKey)
	if err != nil {
		return Operation{}, err
	}
	now = now.UTC().Truncate(time.Microsecond)
	window := n.RetryWindow.Truncate(time.Microsecond) // stored in microseconds
	op := Operation{
		Tenant:      n.Tenant,
		ID:          uuid.NewString(),
		Type:        n.Type,
		IntentRef:   n.IntentRef,
		Target:      n.Target,
		Payload:     canonical,
		PayloadHash: hash,
		RemoteKey:   remoteKey,
		State:       Prepared,
		RetryWindow: window,
		// Provisional: the first claim sets the end from its own time.
		RetryWindowEnd: now.Add(window),
		CreatedAt:      now,
		UpdatedAt:      now,
	}
	if n.Deadline != nil {
		d := n.Deadline.UTC().Truncate(time.Microsecond)
		op.Deadline = &d
	}
	return op, nil
}

// bindPayload applies n.Bind for remoteKey, then canonicalises and hashes.
func bindPayload(n NewOperation, remoteKey string) (canonical, hash []byte, err error) {
	payload := n.Payload
	if n.Bind != nil {
		if _, _, err := Canonicalize(payload); err != nil {
			return nil, nil, err
		}
		payload, err = n.Bind(payload, remoteKey, n.Tenant)
		var le *Error
		if errors.As(err, &le) {
			return nil, nil, err // a clash with the payload, explained to the client
		}
		if err != nil {
			return nil, nil, fmt.Errorf("bind the target's fields: %w", err)
		}
	}
	return Canonicalize(payload)
}

// CheckSameIntent decides what a repeated creation of an existing intent
// means: nil when it carries the same target and payload (a retry of the
// same request), EPayloadConflict otherwise (rule 2: never silently accept a
// different payload under the same identity). The candidate is bound with
// the existing operation's remote key so that injected references compare
// equal. It returns the candidate's hash for the conflict record.
func CheckSameIntent(existing Operation, n NewOperation) ([]byte, error) {
	_, hash, err := bindPayload(n, existing.RemoteKey)
	if err != nil {
		return nil, err
	}
	if existing.Target != n.Target {
		return hash, Errorf(EPayloadConflict, "this intent_ref is already registered for another target; resolve the original operation, then use a new intent_ref")
	}
	if !bytes.Equal(existing.PayloadHash, hash) {
		return hash, Errorf(EPayloadConflict, "this intent_ref is already registered with a different payload; resolve the original operation, then use a new intent_ref")
	}
	return hash, nil
}
