package resolve

import (
	"context"
	"slices"

	"settle/ledger"
)

// Bulk handling: one proposal, with one reason, for many escalated
// operations, and the approval of many proposals. Each item goes through
// the single-item action (Propose, Approve) with every one of its checks
// and the two-person rule; one item's refusal stops no other, and the
// answer says, item by item, what happened.

// MaxBulk is the most operations one bulk action takes: a filter matching
// more is refused with a request to narrow it, so that a confirmation
// page lists every item it acts on.
const MaxBulk = 200

// Ref names one operation.
type Ref struct{ Tenant, ID string }

// ProposalRef names one open proposal.
type ProposalRef struct {
	Tenant string
	ID     int64
}

// Outcome is what a bulk action did to one item: Err nil for done, else
// the refusal (its message is for people when EInvalid, EConflict,
// EInvalidTransition or EForbidden; ENotFound reads as "not found").
type Outcome struct {
	Ref        Ref
	Resolution ledger.Resolution // the proposal made, or approved
	Err        error
}

// RoleScope is a Scope that knows the role in which its person acts on a
// tenant's target: each bulk item is recorded under its own role.
type RoleScope interface {
	Scope
	RoleFor(tenant, target string) string
}

// Matching returns every operation of the queue f selects (its cursor
// and limit ignored), in its order: what "all matching this filter"
// means, resolved on the server. EInvalid when more than MaxBulk match.
func (s *Service) Matching(ctx context.Context, sc Scope, f QueueFilter) ([]Ref, error) {
	f.Cursor, f.Limit = "", MaxBulk
	q, err := s.Queue(ctx, sc, f)
	if err != nil {
		return nil, err
	}
	if q.Next != "" {
		return nil, ledger.Errorf(ledger.EInvalid, "More than %d operations match this filter; narrow it (by target, tenant, age or reason) and try again.", MaxBulk)
	}
	refs := make([]Ref, 0, len(q.Items))
	for _, it := range q.Items {
		refs = append(refs, Ref{Tenant: it.Operation.Tenant, ID: it.Operation.ID})
	}
	return refs, nil
}

// CheckBulk refuses an empty selection, more than MaxBulk items, and
// "confirm succeeded", whose object id is each operation's own.
func CheckBulk(n int, kind ledger.ResolutionKind) error {
	switch {
	case n == 0:
		return invalid("Select at least one operation.")
	case n > MaxBulk:
		return ledger.Errorf(ledger.EInvalid, "At most %d operations can be handled at once.", MaxBulk)
	case kind == ledger.KindConfirmSucceeded:
		return invalid("“Confirm succeeded” names each operation's own object id: propose it on the operation's page.")
	}
	return nil
}

// ProposeEach proposes p for each operation of refs (duplicates once),
// through Propose. EInvalid for what CheckBulk refuses; otherwise one
// Outcome per item.
func (s *Service) ProposeEach(ctx context.Context, sc Scope, refs []Ref, p Proposal) ([]Outcome, error) {
	refs = unique(refs)
	if err := CheckBulk(len(refs), p.Kind); err != nil {
		return nil, err
	}
	out := make([]Outcome, 0, len(refs))
	for _, ref := range refs {
		o := Outcome{Ref: ref}
		var op ledger.Operation
		if op, o.Err = s.Operation(ctx, sc, ref.Tenant, ref.ID); o.Err == nil {
			o.Resolution, o.Err = s.Propose(actingIn(ctx, sc, op), sc, op.Tenant, op.ID, p)
		}
		out = append(out, o)
	}
	return out, nil
}

// Proposals returns the open proposals named by refs on operations of sc,
// in the order given (duplicates once), each with its operation; an item
// outside sc, or decided since, has Err ENotFound. For the confirmation
// page of a bulk approval.
func (s *Service) Proposals(ctx context.Context, sc Scope, refs []ProposalRef) ([]Open, []Outcome, error) {
	refs = unique(refs)
	if err := CheckBulk(len(refs), ""); err != nil {
		return nil, nil, err
	}
	var open []Open
	var missing []Outcome
	for _, ref := range refs {
		r, op, err := s.openProposal(ctx, sc, ref.Tenant, ref.ID)
		if err != nil {
			missing = append(missing, Outcome{Ref: Ref{Tenant: ref.Tenant}, Resolution: ledger.Resolution{ID: ref.ID}, Err: err})
			continue
		}
		open = append(open, Open{Proposal: r, Operation: op})
	}
	return open, missing, nil
}

// ApproveEach approves each proposal of refs (duplicates once) through
// Approve: the two-person rule and every check hold per item. EInvalid
// for an empty or too long selection; otherwise one Outcome per item.
func (s *Service) ApproveEach(ctx context.Context, sc Scope, refs []ProposalRef) ([]Outcome, error) {
	refs = unique(refs)
	if err := CheckBulk(len(refs), ""); err != nil {
		return nil, err
	}
	out := make([]Outcome, 0, len(refs))
	for _, ref := range refs {
		o := Outcome{Ref: Ref{Tenant: ref.Tenant}, Resolution: ledger.Resolution{ID: ref.ID}}
		r, op, err := s.openProposal(ctx, sc, ref.Tenant, ref.ID)
		if o.Err = err; err == nil {
			o.Ref.ID, o.Resolution = op.ID, r
			// No confirmation is given in bulk: an item whose evidence contradicts
			// it, or whose object id settle cannot check, is refused here and is
			// approved on its own page.
			_, o.Err = s.Approve(actingIn(ctx, sc, op), sc, ref.Tenant, ref.ID, Approval{})
		}
		out = append(out, o)
	}
	return out, nil
}

// actingIn is ctx with its actor's role for op's tenant and target, when
// sc knows it (RoleScope): the event log records each item's own role.
func actingIn(ctx context.Context, sc Scope, op ledger.Operation) context.Context {
	rs, ok := sc.(RoleScope)
	a, has := ledger.ActorFromContext(ctx)
	if !ok || !has {
		return ctx
	}
	a.Role = rs.RoleFor(op.Tenant, op.Target)
	return ledger.NewContextWithActor(ctx, a)
}

// unique keeps the first of each item, in order.
func unique[T comparable](items []T) []T {
	seen := make(map[T]bool, len(items))
	return slices.DeleteFunc(slices.Clone(items), func(x T) bool {
		if seen[x] {
			return true
		}
		seen[x] = true
		return false
	})
}
