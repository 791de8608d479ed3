package ledger

import (
	"context"
	"strings"
	"time"
)

// Delivery is one verified inbound webhook delivery, stored before the 2xx
// and processed after it.
type Delivery struct {
	ID         int64
	Target     string
	Body       []byte // nil once processed
	ReceivedAt time.Time
	Attempts   int
	Outcome    string // short summary once processed (or deferred)
	// Failures counts failed attempts, this claim included: each claim
	// counts one until the processor defers the delivery on purpose, so a
	// processor that died or hung on it leaves it counted.
	Failures  int
	LastError string // the last failed attempt's error, "" if none was recorded
}

// QuarantineItem is an inbound event that could not be attributed safely,
// or that contradicts the ledger. It keeps only the minimum identifying
// data, never the event body.
type QuarantineItem struct {
	ID          int64
	Target      string
	DeliveryID  int64
	Reason      string
	EventID     string // the event's own id, as claimed by the sender
	Reference   string // the settle reference the event claims
	Tenant      string // the tenant the event claims ("" if none)
	RemoteID    string // the target's object id in the event
	OperationID string // set when the event concerns a known operation
	OpTenant    string // that operation's tenant
	At          time.Time
	ResolvedAt  *time.Time
	ResolvedBy  string // the reviewer's stable subject (Actor.Subject)
	// ResolvedByName is the reviewer's display name, ResolvedByRole the
	// role in which they acted.
	ResolvedByName string
	ResolvedByRole string
	// ResolvedAs is what the reviewer did: QuarantineLinked or
	// QuarantineDismissed ("" while open).
	ResolvedAs string
	Resolution string
}

// What a reviewer did with a quarantined item (QuarantineItem.ResolvedAs).
const (
	QuarantineLinked    = "linked"
	QuarantineDismissed = "dismissed"
)

// ScopeTenant is the tenant whose people see and resolve the item: the
// linked operation's tenant when the event concerns a known operation, else
// the tenant the event claims, "" for an unattributed item. The claim never
// wins over the link: an event that names tenant B about tenant A's
// operation is A's to review (it is evidence about A's operation), and is
// not shown to B's people, who would otherwise learn of A's operation.
func (q QuarantineItem) ScopeTenant() string {
	if q.OperationID != "" {
		return q.OpTenant
	}
	return q.Tenant
}

// QuarantineFilter selects the quarantined items ListQuarantine returns, by
// scoping tenant (QuarantineItem.ScopeTenant).
type QuarantineFilter struct {
	Open       bool     // only unresolved items
	AllTenants bool     // every tenant's items; Tenants is then ignored
	Tenants    []string // the tenants whose items to show ("" is not one: see Unattributed)
	// Unattributed includes items no tenant can be given (scope ""): only
	// people trusted with every tenant's events should see them.
	Unattributed bool
	// About, when set, selects only the items that name one operation: by
	// its id (a linked or attributed event), the reference settle sent
	// (the event's claimed reference) or the target's object id.
	About *QuarantineAbout

	// Resolved keeps only resolved items (Open keeps only open ones).
	Resolved bool
	// Target keeps one target's items; "" is every target.
	Target string
	// Ref keeps the items naming a reference, as a person pastes it: the
	// event's id or the settle reference it claims (case aside), the
	// target's object id, or the operation's id or a prefix of 8+ of its
	// characters. Trimmed; "" is any item.
	Ref string
	// Reason keeps the items whose quarantine reason contains these words
	// (case aside); "" is any.
	Reason string
	// Before, when set, keeps the items quarantined before it (an age).
	Before *time.Time
	// After continues a page: only items of a smaller id than this one (the
	// last row of the page before); 0 starts at the newest.
	After int64
	// Limit bounds the answer; 0 or more than MaxQuarantineList is
	// MaxQuarantineList.
	Limit int
}

// RefArgs gives a store Ref's values: the trimmed reference, and the
// operation id prefix it may be (lowercase, 8+ characters of an id,
// "" when it cannot be one).
func (f QuarantineFilter) RefArgs() (ref, opPrefix string) { return SearchRef(f.Ref) }

// SearchRef is a reference as a person pasted it, for a review list's
// search: trimmed, and the operation id prefix it may be (lowercase, 8+
// characters of an id, "" when it cannot be one).
func SearchRef(pasted string) (ref, opPrefix string) {
	ref = strings.TrimSpace(pasted)
	if len(ref) >= 8 && len(ref) <= 64 && strings.Trim(strings.ToLower(ref), "0123456789abcdef-") == "" {
		opPrefix = strings.ToLower(ref)
	}
	return ref, opPrefix
}

// LimitArg is the row bound of a store's answer to f.
func (f QuarantineFilter) LimitArg() int {
	if f.Limit <= 0 || f.Limit > MaxQuarantineList {
		return MaxQuarantineList
	}
	return f.Limit
}

// QuarantineAbout names one operation the way inbound events may: empty
// fields match nothing.
type QuarantineAbout struct {
	OperationID string
	Reference   string // the operation's remote key
	RemoteID    string // the target's object id
}

// AboutArgs gives a store About's values: any is true (and the values
// "") when About is nil; an empty value matches nothing.
func (f QuarantineFilter) AboutArgs() (any bool, operationID, reference, remoteID string) {
	if f.About == nil {
		return true, "", "", ""
	}
	return false, f.About.OperationID, f.About.Reference, f.About.RemoteID
}

// MaxQuarantineList bounds one ListQuarantine answer: more than a bulk
// dismissal's cap (1,000), so that one answer tells whether a filter
// matches more.
const MaxQuarantineList = 2000

// InboxStore persists inbound deliveries and the quarantine.
type InboxStore interface {
	// Receive durably stores a verified delivery. A body already received
	// for the same target is a duplicate: nothing new is stored.
	Receive(ctx context.Context, target string, body []byte) (id int64, duplicate bool, err error)
	// ClaimDeliveries leases up to n due, unprocessed deliveries, oldest
	// first, counting one attempt and one failed attempt for each; a
	// claimed delivery is due again after lease.
	ClaimDeliveries(ctx context.Context, n int, lease time.Duration) ([]Delivery, error)
	// FinishDelivery marks a delivery processed with a short outcome and
	// drops its body (its hash stays, so a redelivery is still a duplicate).
	FinishDelivery(ctx context.Context, id int64, outcome string) error
	// DeferDelivery makes a delivery due again at until. A deferral is not
	// a failure: the claim's failed attempt is given back.
	DeferDelivery(ctx context.Context, id int64, until time.Time, outcome string) error
	// FailDelivery records the error of a failed attempt (already counted
	// by the claim) and makes the delivery due again at until.
	FailDelivery(ctx context.Context, id int64, until time.Time, reason string) error

	// Quarantine records an item for review and returns its id.
	Quarantine(ctx context.Context, q QuarantineItem) (int64, error)
	// ListQuarantine returns the quarantined items f selects, newest first
	// (by id, so a page continued with After moves no item when others are
	// resolved meanwhile), at most f.LimitArg().
	ListQuarantine(ctx context.Context, f QuarantineFilter) ([]QuarantineItem, error)
	// ResolveQuarantine closes an open item of the tenant (its ScopeTenant;
	// "" for an unattributed one) with the decision, by the context's actor,
	// and records the quarantine.resolve action: EInvalid without an actor or
	// a decision, ENotFound for an unknown, resolved or other tenant's item.
	ResolveQuarantine(ctx context.Context, tenant string, id int64, resolution string) error

	// LeaseOperation leases one UNKNOWN operation that no reconciler holds,
	// incrementing its fence, so that evidence can be recorded under it.
	// EStaleFence when it is not UNKNOWN or is held.
	LeaseOperation(ctx context.Context, tenant, id string, lease time.Duration) (Operation, error)
}
