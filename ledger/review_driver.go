package ledger

import (
	"context"
	"time"
)

// ReviewDriver is the SQL of the owners' review of quarantined items and
// audit findings (ReviewStore).
type ReviewDriver interface {
	// QuarantineItemGet returns item id of scopeTenant, open or resolved;
	// found is false when there is none.
	QuarantineItemGet(ctx context.Context, scopeTenant string, id int64) (q QuarantineItem, found bool, err error)
	// OperationHold reports whether tenant has operation id and holds it,
	// until the transaction ends, against a change of its tenant or its
	// deletion (PostgreSQL: FOR SHARE; SQLite's one writer holds it).
	OperationHold(ctx context.Context, tenant, id string) (bool, error)
	// QuarantineLink closes the open item p.ID of p.ScopeTenant as linked
	// to p.ScopeTenant's operation p.OperationID by p.Action's person, with
	// p.Action's reason; found is false when no open item matched.
	QuarantineLink(ctx context.Context, p QuarantineResolveParams) (found bool, err error)
	// OperationDue makes tenant's operation id due for the reconciler at
	// p.At when it is UNKNOWN, no lease holds it and it is not due sooner.
	OperationDue(ctx context.Context, p OperationDueParams) error

	// FindingList returns the findings p selects, newest first by id, at
	// most p.Limit.
	FindingList(ctx context.Context, p FindingListParams) ([]Finding, error)
	// FindingGet returns the tenant's finding id; found is false when
	// there is none.
	FindingGet(ctx context.Context, tenant string, id int64) (f Finding, found bool, err error)
	// FindingAcknowledge acknowledges the tenant's unacknowledged finding
	// p.ID by p.Action's person at p.Action.At with p.Action's reason as
	// the note, and returns its operation; found is false when no
	// unacknowledged finding matched.
	FindingAcknowledge(ctx context.Context, p FindingAcknowledgeParams) (operationID string, found bool, err error)
}

// OperationDueParams are ReviewDriver.OperationDue's.
type OperationDueParams struct {
	Tenant, ID string
	At         time.Time
}

// FindingListParams are ReviewDriver.FindingList's: a FindingFilter with
// every narrowing resolved to a value, where "", 0 or nil is any.
type FindingListParams struct {
	AllTenants bool
	Tenants    []string
	// OperationID is one operation's (of the one tenant in Tenants).
	OperationID            string
	OpenOnly, ResolvedOnly bool
	Target                 string
	Kind                   FindingKind
	// Ref is the pasted reference, trimmed, and OpPrefix its operation id
	// prefix, lowercase (SearchRef); Ref "" is no search.
	Ref, OpPrefix string
	Before        *time.Time
	AfterID       int64
	Limit         int
}

// FindingAcknowledgeParams are ReviewDriver.FindingAcknowledge's.
type FindingAcknowledgeParams struct {
	Tenant string
	ID     int64
	Action Action
}
