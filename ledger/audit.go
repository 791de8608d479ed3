package ledger

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// FindingKind is what the auditor found wrong with a final operation.
type FindingKind string

// The three kinds of audit finding.
const (
	// FindingDuplicate: the target holds more than one object carrying the
	// operation's reference and tenant.
	FindingDuplicate FindingKind = "duplicate"
	// FindingLoss: the target holds no object for an operation the ledger
	// records as SUCCEEDED.
	FindingLoss FindingKind = "loss"
	// FindingPhantom: the target holds an object carrying the reference and
	// tenant of an operation the ledger records as FAILED_TERMINAL ("Not
	// applied"): the tenant was told nothing happened, and something did.
	FindingPhantom FindingKind = "phantom"
)

// Finding is one discrepancy between the ledger and a target's own records.
// SUCCEEDED and FAILED_TERMINAL are final, so the operation never changes
// because of it: the finding itself is what reaches the owning team and the
// manager figures.
type Finding struct {
	ID          int64 // set by the store
	Tenant      string
	OperationID string
	Target      string // set by the store from the operation
	Kind        FindingKind
	RemoteIDs   []string   // the target's object ids that carry the operation's reference
	Evidence    []byte     // small JSON object (counts, ids, lookup status); never a payload
	FoundAt     time.Time  // set by the store from its clock
	Escalated   bool       // handed to the owning team (every loss and phantom)
	ResolvedAt  *time.Time // nil while open
	// Acknowledged is set once a person has read the finding
	// (ReviewStore.AcknowledgeFinding); nil while nobody has.
	Acknowledged *Acknowledgement
}

// Open reports whether the finding still waits for a person: neither
// resolved nor acknowledged.
func (f Finding) Open() bool { return f.ResolvedAt == nil && f.Acknowledged == nil }

// Validate checks what a caller supplies to AuditStore.RecordFinding.
func (f Finding) Validate() error {
	switch {
	case !ValidTenant(f.Tenant):
		return Errorf(EInvalid, "finding: invalid tenant")
	case uuid.Validate(f.OperationID) != nil:
		return Errorf(EInvalid, "finding: operation id must be a UUID")
	case f.Kind != FindingDuplicate && f.Kind != FindingLoss && f.Kind != FindingPhantom:
		return Errorf(EInvalid, "finding: kind must be %q, %q or %q", FindingDuplicate, FindingLoss, FindingPhantom)
	case len(f.Evidence) > MaxEvidenceBytes:
		return Errorf(EInvalid, "finding: evidence exceeds %d bytes", MaxEvidenceBytes)
	}
	if len(f.Evidence) > 0 {
		var obj map[string]json.RawMessage
		if json.Unmarshal(f.Evidence, &obj) != nil || obj == nil {
			return Errorf(EInvalid, "finding: evidence must be a JSON object")
		}
	}
	return nil
}

// EncodeJSON returns the finding's remote ids as a JSON array and its
// evidence as a JSON object ("{}" when empty), as the stores keep them.
func (f Finding) EncodeJSON() (remoteIDs, evidence string) {
	ids := f.RemoteIDs
	if ids == nil {
		ids = []string{}
	}
	b, _ := json.Marshal(ids) // a []string always encodes
	evidence = string(f.Evidence)
	if evidence == "" {
		evidence = "{}"
	}
	return string(b), evidence
}

// AuditStore keeps the auditor's findings and its position. It is a system
// job's store: AuditBatch lists across tenants, and every operation (and
// finding) still carries its own tenant, which the auditor acts on.
type AuditStore interface {
	// AuditBatch returns up to n final (SUCCEEDED or FAILED_TERMINAL)
	// operations of target created after position after (the zero Cursor:
	// from the start), ordered by (created_at, operation_id): one walk, one
	// position, both states. next is the position of the last one, or the
	// zero Cursor when fewer than n were left: the walk reached the end and
	// starts over. EInvalid for n outside 1..MaxListLimit.
	AuditBatch(ctx context.Context, target string, after Cursor, n int) (ops []Operation, next Cursor, err error)

	// RecordFinding stores f unless an open finding of the same kind exists
	// for the operation, in which case nothing changes and created is
	// false. EInvalid for an invalid finding, ENotFound when the tenant has
	// no such operation.
	RecordFinding(ctx context.Context, f Finding) (created bool, err error)
	// Findings returns the tenant's findings found at or after since,
	// newest first, at most MaxListLimit.
	Findings(ctx context.Context, tenant string, since time.Time) ([]Finding, error)
	// CountFindings counts the tenant's findings of kind ("" for every
	// kind) found in the window w, open or resolved.
	CountFindings(ctx context.Context, tenant string, kind FindingKind, w Window) (int, error)

	// AuditPosition returns the periodic auditor's saved position for
	// target (the zero Cursor after a wrap-around), or ENotFound when none
	// was ever saved.
	AuditPosition(ctx context.Context, target string) (Cursor, error)
	// SaveAuditPosition saves the position; the zero Cursor means "start
	// over".
	SaveAuditPosition(ctx context.Context, target string, pos Cursor) error
}

// CheckAuditBatch validates AuditBatch's arguments, for the stores.
func CheckAuditBatch(target string, after Cursor, n int) error {
	switch {
	case target == "":
		return Errorf(EInvalid, "audit batch: target is required")
	case n < 1 || n > MaxListLimit:
		return Errorf(EInvalid, "audit batch: n must be between 1 and %d", MaxListLimit)
	case after.ID != "" && uuid.Validate(after.ID) != nil:
		return Errorf(EInvalid, "audit batch: invalid position")
	}
	return nil
}

// NextAuditPosition is AuditBatch's next position for a batch of n.
func NextAuditPosition(ops []Operation, n int) Cursor {
	if len(ops) < n {
		return Cursor{}
	}
	last := ops[len(ops)-1]
	return Cursor{CreatedAt: last.CreatedAt, ID: last.ID}
}
