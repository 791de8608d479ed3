package ledger

import (
	"context"
	"time"
)

// InboxDriver is the SQL of the webhook inbox and of the quarantine's
// items (InboxStore).
type InboxDriver interface {
	// DeliveryInsert inserts a delivery due at its receipt; inserted is
	// false (and id 0) when its target holds a delivery of the same body.
	DeliveryInsert(ctx context.Context, p DeliveryInsertParams) (id int64, inserted bool, err error)
	// DeliveryIDByBody returns the id of target's delivery of the body
	// whose SHA-256 is sum.
	DeliveryIDByBody(ctx context.Context, target string, sum []byte) (int64, error)
	// DeliveryClaim takes up to p.Max unprocessed deliveries due at p.Now,
	// oldest due first, skipping those another claim holds: each counts an
	// attempt and a failed attempt and is due again at p.LeaseUntil.
	DeliveryClaim(ctx context.Context, p DeliveryClaimParams) ([]Delivery, error)
	// DeliveryFinish marks the delivery processed at p.At with p.Outcome,
	// not due, its body dropped.
	DeliveryFinish(ctx context.Context, p DeliveryUpdateParams) error
	// DeliveryDefer makes the unprocessed delivery due at p.At with
	// p.Outcome, giving back one failed attempt (none below zero).
	DeliveryDefer(ctx context.Context, p DeliveryUpdateParams) error
	// DeliveryFail makes the unprocessed delivery due at p.At with p.Outcome
	// as its outcome and p.Error as its last error.
	DeliveryFail(ctx context.Context, p DeliveryUpdateParams) error

	// QuarantineInsert inserts p.Item (its ID, ResolvedAt and resolution
	// fields ignored) quarantined at p.At under p.ScopeTenant, and returns
	// its id.
	QuarantineInsert(ctx context.Context, p QuarantineInsertParams) (int64, error)
	// QuarantineDismiss closes the open item p.ID of p.ScopeTenant as
	// dismissed by p.Action's person with p.Action's reason, and returns
	// the operation the item names; found is false when no open item
	// matched.
	QuarantineDismiss(ctx context.Context, p QuarantineResolveParams) (operationID string, found bool, err error)

	// OperationLeaseUnknown leases tenant's operation p.ID until
	// p.LeaseUntil under a new fence, due for the reconciler then, when it
	// is UNKNOWN and no live lease (at p.Now) holds it; found is false when
	// it was not leased.
	OperationLeaseUnknown(ctx context.Context, p OperationLeaseParams) (op Operation, found bool, err error)
}

// OperationLeaseParams are InboxDriver.OperationLeaseUnknown's.
type OperationLeaseParams struct {
	Tenant, ID      string
	Now, LeaseUntil time.Time
}

// DeliveryInsertParams are InboxDriver.DeliveryInsert's.
type DeliveryInsertParams struct {
	Target     string
	Sum        []byte // the body's SHA-256
	Body       []byte
	ReceivedAt time.Time
}

// DeliveryClaimParams are InboxDriver.DeliveryClaim's.
type DeliveryClaimParams struct {
	Now, LeaseUntil time.Time
	Max             int
}

// DeliveryUpdateParams are the InboxDriver's updates of delivery ID.
type DeliveryUpdateParams struct {
	ID      int64
	At      time.Time
	Outcome string
	Error   string
}

// QuarantineInsertParams are InboxDriver.QuarantineInsert's.
type QuarantineInsertParams struct {
	Item        QuarantineItem
	ScopeTenant string
	At          time.Time
}

// QuarantineResolveParams are the resolutions of item ID of ScopeTenant:
// the action's time, subject, name, role and reason are the resolution's.
type QuarantineResolveParams struct {
	ScopeTenant string
	ID          int64
	OperationID string // the linked operation (a link's)
	Action      Action
}
