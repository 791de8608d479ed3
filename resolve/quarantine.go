package resolve

import (
	"context"
	"strings"

	"settle/ledger"
)

// The quarantine's review: what a person does about an inbound event
// settle could not attribute safely. They read an item, link it to an
// operation of its tenant as evidence, or dismiss it with a reason — one
// at a time or many at once. Every rule of those actions is here, checked
// per item: the console decodes the form, calls Quarantine and shows its
// answer.

// QuarantineStore is what the review reads and writes; both stores
// implement it.
type QuarantineStore interface {
	ListQuarantine(ctx context.Context, f ledger.QuarantineFilter) ([]ledger.QuarantineItem, error)
	QuarantineItem(ctx context.Context, tenant string, id int64) (ledger.QuarantineItem, error)
	ResolveQuarantine(ctx context.Context, tenant string, id int64, resolution string) error
	LinkQuarantine(ctx context.Context, tenant string, id int64, operationID, reason string) error
	Find(ctx context.Context, tenant, ref string) ([]ledger.Operation, error)
}

// ReviewScope is what a person may review in quarantine: the tenants
// whose items they see (all=true also covers unattributed items, tenant
// ""), each item's tenant and target, and the role they act in on it.
type ReviewScope interface {
	ReviewTenants() (all bool, tenants []string)
	CanReview(tenant, target string) bool
	RoleFor(tenant, target string) string
}

// ReviewTenants implements ReviewScope: the one tenant.
func (t TenantScope) ReviewTenants() (bool, []string) { return t.ResolveTenants() }

// CanReview implements ReviewScope: every target of the one tenant.
func (t TenantScope) CanReview(tenant, _ string) bool { return tenant != "" && tenant == string(t) }

// RoleFor implements ReviewScope: "", the actor's own role is kept.
func (t TenantScope) RoleFor(string, string) string { return "" }

// Operator reviews every tenant's items and the unattributed ones: the
// CLI's operator, who holds the database's credentials. The actor's own
// role is kept.
type Operator struct{}

// ReviewTenants implements ReviewScope.
func (Operator) ReviewTenants() (bool, []string) { return true, nil }

// CanReview implements ReviewScope.
func (Operator) CanReview(string, string) bool { return true }

// RoleFor implements ReviewScope.
func (Operator) RoleFor(string, string) string { return "" }

// Quarantine holds every rule of a person's review of quarantined events.
type Quarantine struct{ store QuarantineStore }

// NewQuarantine returns the review over store.
func NewQuarantine(store QuarantineStore) *Quarantine { return &Quarantine{store: store} }

// FieldOperation is the link form's operation field (FieldOf).
const FieldOperation = "operation"

// MaxBulkDismiss is the most items one bulk dismissal takes: a filter
// matching more is refused with a request to narrow it.
const MaxBulkDismiss = 1000

// ItemRef names one quarantined item: its scope tenant ("" for an
// unattributed one) and its number.
type ItemRef struct {
	Tenant string
	ID     int64
}

// List returns the items of f (narrowed to sc: Scope) that sc may review,
// and whether the store had more than f.Limit of them before the target
// check (the next page's cursor is then the last of the store's rows).
func (q *Quarantine) List(ctx context.Context, sc ReviewScope, f ledger.QuarantineFilter) (items []ledger.QuarantineItem, last int64, err error) {
	limit := f.LimitArg()
	f.Limit = limit + 1
	if f.Limit > ledger.MaxQuarantineList {
		f.Limit, limit = ledger.MaxQuarantineList, ledger.MaxQuarantineList-1
	}
	rows, err := q.store.ListQuarantine(ctx, f)
	if err != nil {
		return nil, 0, err
	}
	if len(rows) > limit {
		rows = rows[:limit]
		last = rows[len(rows)-1].ID
	}
	return Visible(sc, rows), last, nil
}

// Visible keeps the items sc may review: owners are bound to targets as
// well as tenants.
func Visible(sc ReviewScope, items []ledger.QuarantineItem) []ledger.QuarantineItem {
	out := items[:0:0]
	for _, it := range items {
		if sc.CanReview(it.ScopeTenant(), it.Target) {
			out = append(out, it)
		}
	}
	return out
}

// Item returns one item of the tenant, open or resolved, when sc may
// review it: ENotFound otherwise, exactly as for an unknown item.
func (q *Quarantine) Item(ctx context.Context, sc ReviewScope, tenant string, id int64) (ledger.QuarantineItem, error) {
	if !q.inScope(sc, tenant) {
		return ledger.QuarantineItem{}, noItem()
	}
	it, err := q.store.QuarantineItem(ctx, tenant, id)
	switch {
	case ledger.ErrorCode(err) == ledger.ENotFound:
		return it, noItem()
	case err != nil:
		return it, err
	case !sc.CanReview(it.ScopeTenant(), it.Target):
		return ledger.QuarantineItem{}, noItem()
	}
	return it, nil
}

// Candidates are the tenant's operations the item may belong to: those
// carrying its claimed reference or its object id as one of theirs, and
// the one it names, newest first, each once. None for an unattributed
// item, which no tenant's operation may be given.
func (q *Quarantine) Candidates(ctx context.Context, it ledger.QuarantineItem) ([]ledger.Operation, error) {
	tenant := it.ScopeTenant()
	if tenant == "" {
		return nil, nil
	}
	var out []ledger.Operation
	seen := map[string]bool{}
	for _, ref := range []string{it.OperationID, it.Reference, it.RemoteID} {
		if ref == "" {
			continue
		}
		ops, err := q.store.Find(ctx, tenant, ref)
		if ledger.ErrorCode(err) == ledger.EInvalid {
			continue // not a shape any operation carries
		}
		if err != nil {
			return nil, err
		}
		for _, op := range ops {
			if !seen[op.ID] {
				seen[op.ID] = true
				out = append(out, op)
			}
		}
	}
	return out, nil
}

// Dismiss closes the tenant's open item with the reason. ENotFound
// outside sc; EConflict when it is already resolved (by a colleague, or
// a moment ago); EInvalid, on FieldReason, without a valid reason.
func (q *Quarantine) Dismiss(ctx context.Context, sc ReviewScope, tenant string, id int64, reason string) error {
	reason = strings.TrimSpace(reason)
	it, err := q.openItem(ctx, sc, tenant, id)
	if err != nil {
		return err
	}
	if err := ledger.CheckReviewNote("reason", reason); err != nil {
		return refuse(FieldReason, "Give the reason the event needs no action: "+ledger.ErrorMessage(err)+".")
	}
	return q.resolvedMeanwhile(ctx, tenant, id, q.store.ResolveQuarantine(actingOn(ctx, sc, it), tenant, id, reason))
}

// Link attributes the tenant's open item to the tenant's operation named
// by operation (its id or any of its references), with the reason, and
// returns that operation. ENotFound outside sc; EConflict when the item
// is already resolved; EInvalid on FieldOperation or FieldReason for what
// the person typed, and for an unattributed item.
func (q *Quarantine) Link(ctx context.Context, sc ReviewScope, tenant string, id int64, operation, reason string) (ledger.Operation, error) {
	operation, reason = strings.TrimSpace(operation), strings.TrimSpace(reason)
	it, err := q.openItem(ctx, sc, tenant, id)
	if err != nil {
		return ledger.Operation{}, err
	}
	if tenant == "" {
		return ledger.Operation{}, refuse(FieldOperation, "An event of no tenant cannot be linked to an operation. Dismiss it with a reason instead.")
	}
	if operation == "" || len(operation) > 300 {
		return ledger.Operation{}, refuse(FieldOperation, "Name the operation: its id or one of its references.")
	}
	if err := ledger.CheckReviewNote("reason", reason); err != nil {
		return ledger.Operation{}, refuse(FieldReason, "Give the reason the event belongs to the operation: "+ledger.ErrorMessage(err)+".")
	}
	ops, err := q.store.Find(ctx, tenant, operation)
	switch {
	case ledger.ErrorCode(err) == ledger.EInvalid, err == nil && len(ops) == 0:
		return ledger.Operation{}, refuse(FieldOperation, "No operation of tenant "+tenant+" has that id or reference.")
	case err != nil:
		return ledger.Operation{}, err
	case len(ops) > 1:
		return ledger.Operation{}, refuse(FieldOperation, "Several operations of tenant "+tenant+" carry that reference. Use the operation id.")
	}
	err = q.store.LinkQuarantine(actingOn(ctx, sc, it), tenant, id, ops[0].ID, reason)
	if ledger.ErrorCode(err) == ledger.EInvalid {
		return ledger.Operation{}, onField(FieldOperation, err)
	}
	return ops[0], q.resolvedMeanwhile(ctx, tenant, id, err)
}

// openItem is Item, and EConflict when the item is resolved.
func (q *Quarantine) openItem(ctx context.Context, sc ReviewScope, tenant string, id int64) (ledger.QuarantineItem, error) {
	it, err := q.Item(ctx, sc, tenant, id)
	if err == nil && it.ResolvedAt != nil {
		return it, alreadyResolved()
	}
	return it, err
}

// resolved reads a store's ENotFound after the item was found open as a
// colleague's resolution in between: EConflict.
func (q *Quarantine) resolvedMeanwhile(ctx context.Context, tenant string, id int64, err error) error {
	if ledger.ErrorCode(err) != ledger.ENotFound {
		return err
	}
	if it, rerr := q.store.QuarantineItem(ctx, tenant, id); rerr == nil && it.ResolvedAt != nil {
		return alreadyResolved()
	}
	return err
}

func (q *Quarantine) inScope(sc ReviewScope, tenant string) bool {
	all, tenants := sc.ReviewTenants()
	if all {
		return true
	}
	for _, t := range tenants {
		if t == tenant && tenant != "" {
			return true
		}
	}
	return false
}

// actingOn is ctx with its actor's role for the item's tenant and target:
// the event log and the item record the role that let them act on it (a
// scope that names none keeps the actor's).
func actingOn(ctx context.Context, sc ReviewScope, it ledger.QuarantineItem) context.Context {
	a, ok := ledger.ActorFromContext(ctx)
	role := sc.RoleFor(it.ScopeTenant(), it.Target)
	if !ok || role == "" {
		return ctx
	}
	a.Role = role
	return ledger.NewContextWithActor(ctx, a)
}

func noItem() error { return ledger.Errorf(ledger.ENotFound, "no such quarantined event") }

func alreadyResolved() error {
	return ledger.Errorf(ledger.EConflict, "This event has already been resolved.")
}

// Matching returns the open items of f (its cursor ignored) that sc may
// review, newest first: what "all matching this filter" means, resolved
// on the server from the filter. EInvalid when more than MaxBulkDismiss
// match.
func (q *Quarantine) Matching(ctx context.Context, sc ReviewScope, f ledger.QuarantineFilter) ([]ledger.QuarantineItem, error) {
	f.Open, f.Resolved, f.After, f.Limit = true, false, 0, MaxBulkDismiss
	items, last, err := q.List(ctx, sc, f)
	if err != nil {
		return nil, err
	}
	if last != 0 {
		return nil, ledger.Errorf(ledger.EInvalid, "More than %d events match this filter; narrow it (by target, tenant, age, reason or reference) and try again.", MaxBulkDismiss)
	}
	return items, nil
}

// Items returns the items of refs sc may review, open or resolved, in the
// order given (duplicates once), and the refs it may not or that do not
// exist: for the confirmation page of a bulk dismissal. EInvalid for an
// empty or too long selection.
func (q *Quarantine) Items(ctx context.Context, sc ReviewScope, refs []ItemRef) (items []ledger.QuarantineItem, missing []ItemRef, err error) {
	refs = unique(refs)
	if err := checkBulkDismiss(len(refs)); err != nil {
		return nil, nil, err
	}
	for _, ref := range refs {
		it, err := q.Item(ctx, sc, ref.Tenant, ref.ID)
		switch ledger.ErrorCode(err) {
		case "":
			items = append(items, it)
		case ledger.ENotFound:
			missing = append(missing, ref)
		default:
			return nil, nil, err
		}
	}
	return items, missing, nil
}

// Dismissal is what a bulk dismissal did: how many items it dismissed,
// found already resolved, and refused (not the person's to review, or
// unknown), and each item's outcome in order.
type Dismissal struct {
	Dismissed, AlreadyResolved, Refused int
	Outcomes                            []ItemOutcome
}

// ItemOutcome is what a bulk dismissal did to one item: Err nil for
// dismissed, EConflict for already resolved, ENotFound for refused.
type ItemOutcome struct {
	Ref ItemRef
	Err error
}

// DismissEach dismisses each item of refs (duplicates once) with one
// reason, through Dismiss: the permission is checked item by item, never
// taken from the form, and an item resolved already is skipped. EInvalid
// (on FieldReason for the reason) for an empty or too long selection or
// without a valid reason, before any item is touched; an internal error
// stops the rest.
func (q *Quarantine) DismissEach(ctx context.Context, sc ReviewScope, refs []ItemRef, reason string) (Dismissal, error) {
	refs = unique(refs)
	var d Dismissal
	if err := checkBulkDismiss(len(refs)); err != nil {
		return d, err
	}
	if err := ledger.CheckReviewNote("reason", strings.TrimSpace(reason)); err != nil {
		return d, refuse(FieldReason, "Give the reason these events need no action: "+ledger.ErrorMessage(err)+".")
	}
	for _, ref := range refs {
		err := q.Dismiss(ctx, sc, ref.Tenant, ref.ID, reason)
		switch ledger.ErrorCode(err) {
		case "":
			d.Dismissed++
		case ledger.EConflict:
			d.AlreadyResolved++
		case ledger.ENotFound:
			d.Refused++
		default:
			return d, err
		}
		d.Outcomes = append(d.Outcomes, ItemOutcome{Ref: ref, Err: err})
	}
	return d, nil
}

func checkBulkDismiss(n int) error {
	switch {
	case n == 0:
		return invalid("Select at least one event.")
	case n > MaxBulkDismiss:
		return ledger.Errorf(ledger.EInvalid, "At most %d events can be dismissed at once.", MaxBulkDismiss)
	}
	return nil
}
