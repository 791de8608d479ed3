package ledger

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// The review actions of the quarantine and audit findings pages.
const (
	// ActionQuarantineLink: a person attributed a quarantined event to an
	// operation of the same tenant. It is evidence for the reconciler,
	// never a verdict: the operation's state is not touched.
	ActionQuarantineLink ActionKind = "quarantine.link"
	// ActionFindingAcknowledge: a person read an audit finding and noted
	// what is being done about it.
	ActionFindingAcknowledge ActionKind = "finding.acknowledge"
)

// MaxReviewNote bounds a reviewer's reason or note, in characters.
const MaxReviewNote = 500

// CheckReviewNote validates a reviewer's reason or note: required,
// plain text, at most MaxReviewNote characters.
func CheckReviewNote(field, s string) error {
	return CheckText(field, s, MaxReviewNote)
}

// FindingFilter selects the findings ListFindings returns.
type FindingFilter struct {
	// Open selects only findings nobody has acknowledged (and that are not
	// resolved).
	Open       bool
	AllTenants bool     // every tenant's findings; Tenants is then ignored
	Tenants    []string // the tenants whose findings to show
	// OperationID selects one operation's findings; it needs exactly one
	// tenant in Tenants (AllTenants false), because an operation id is only
	// meaningful within its tenant.
	OperationID string

	// Resolved keeps only findings acknowledged or resolved.
	Resolved bool
	// Target and Kind keep one target's, one kind's findings; "" is any.
	Target string
	Kind   FindingKind
	// Ref keeps the findings naming a reference as pasted: the
	// operation's id or a prefix of 8+ of its characters, or one of the
	// target's object ids settle has seen for the operation — the
	// finding's own, the confirmed one, a lookup's or a webhook's
	// (SearchRef).
	Ref string
	// Before, when set, keeps findings found before it (an age).
	Before *time.Time
	// After continues a page: only findings of a smaller id; 0 starts at
	// the newest.
	After int64
	// Limit bounds the answer; 0 or more than MaxFindingList is
	// MaxFindingList.
	Limit int
}

// MaxFindingList bounds one ListFindings answer.
const MaxFindingList = 1000

// LimitArg is the row bound of a store's answer to f.
func (f FindingFilter) LimitArg() int {
	if f.Limit <= 0 || f.Limit > MaxFindingList {
		return MaxFindingList
	}
	return f.Limit
}

// Validate checks f for ListFindings.
func (f FindingFilter) Validate() error {
	if f.OperationID == "" {
		return nil
	}
	switch {
	case f.AllTenants || len(f.Tenants) != 1:
		return Errorf(EInvalid, "one operation's findings need exactly its tenant")
	case uuid.Validate(f.OperationID) != nil:
		return Errorf(EInvalid, "finding filter: operation id must be a UUID")
	}
	return nil
}

// ReviewStore is what the console's quarantine and findings pages need:
// the owners' review of what the inbox and the auditor could not settle on
// their own. Every change is made by the context's actor and recorded as an
// Action in the same transaction.
type ReviewStore interface {
	// ListQuarantine is InboxStore.ListQuarantine.
	ListQuarantine(ctx context.Context, f QuarantineFilter) ([]QuarantineItem, error)
	// QuarantineItem returns one quarantined item of the tenant (its
	// ScopeTenant; "" for an unattributed one), open or resolved: ENotFound
	// for an unknown or other tenant's item.
	QuarantineItem(ctx context.Context, tenant string, id int64) (QuarantineItem, error)
	// ResolveQuarantine is InboxStore.ResolveQuarantine (a dismissal).
	ResolveQuarantine(ctx context.Context, tenant string, id int64, resolution string) error
	// LinkQuarantine attributes the tenant's open quarantined item to the
	// tenant's operation, closing the item with the reason and recording
	// the quarantine.link action on the operation. The operation's state
	// never changes: when it is UNKNOWN and no reconciler holds it, it is
	// made due for reconciliation now, so that the reconciler asks the
	// target with this evidence in mind. EInvalid without an actor, with an
	// invalid reason or operation id, or for an unattributed item (tenant
	// ""): an item of no tenant cannot be given to one; ENotFound for an
	// unknown, resolved or other tenant's item, and for an operation that
	// is not the tenant's.
	LinkQuarantine(ctx context.Context, tenant string, id int64, operationID, reason string) error

	// ListFindings returns the findings f selects, newest first, at most
	// MaxFindingList. EInvalid for an invalid filter.
	ListFindings(ctx context.Context, f FindingFilter) ([]Finding, error)
	// Finding returns one finding of the tenant: ENotFound for an unknown
	// or other tenant's finding.
	Finding(ctx context.Context, tenant string, id int64) (Finding, error)
	// AcknowledgeFinding records that the context's actor has read the
	// tenant's open finding, with a note, and the finding.acknowledge
	// action. A finding is acknowledged once. EInvalid without an actor or
	// with an invalid note; ENotFound for an unknown, other tenant's or
	// already acknowledged finding.
	AcknowledgeFinding(ctx context.Context, tenant string, id int64, note string) error

	// Actions is ActionStore.Actions: the operation page lists the review
	// actions taken about an operation.
	Actions(ctx context.Context, f ActionFilter) ([]Action, error)
}

// CheckLink validates LinkQuarantine's arguments, for the stores.
func CheckLink(tenant, operationID, reason string) error {
	if tenant == "" {
		return Errorf(EInvalid, "an unattributed quarantined event cannot be linked to an operation; dismiss it instead")
	}
	if uuid.Validate(operationID) != nil {
		return Errorf(EInvalid, "link: operation id must be a UUID")
	}
	return CheckReviewNote("reason", reason)
}

// Acknowledgement is who acknowledged a finding, when, and their note.
type Acknowledgement struct {
	At      time.Time
	Subject string // the actor's stable subject
	Name    string // the actor's display name
	Note    string
}
