package resolve

import (
	"context"
	"fmt"
	"strings"

	"settle/ledger"
)

// Proposal is what a person proposes for an escalated operation.
type Proposal struct {
	Kind      ledger.ResolutionKind
	RemoteRef string // the target's object id: confirm succeeded only
	Reason    string // the evidence relied on, in words
	// DespiteEvidence: the proposer has read the evidence that
	// contradicts the proposal (Warnings) and proposes it all the same.
	// Without it such a proposal is refused.
	DespiteEvidence bool
}

// despiteNote is added to the reason of a proposal made, or approved,
// against the evidence, so that the log says it was weighed.
const despiteNote = " [proposed despite contrary evidence]"

// maxReason is the ledger's bound on a proposal's reason, in bytes.
const maxReason = 500

// Propose records the context's actor's proposal for the tenant's
// escalated operation id, after every check: "confirm succeeded" is
// checked by a lookup at the target when the contract has one; a replay
// only while the window, less the request timeout and the contract's
// replay margin, is open; a supersede only when a lookup confirms the
// target holds nothing under the operation's reference and the absence
// rules hold; a proposal the evidence contradicts only with
// DespiteEvidence. A refusal is EInvalid with words for people, about a
// field (FieldOf); nothing is written.
func (s *Service) Propose(ctx context.Context, sc Scope, tenant, id string, p Proposal) (ledger.Resolution, error) {
	op, err := s.Operation(ctx, sc, tenant, id)
	if err != nil {
		return ledger.Resolution{}, err
	}
	r := ledger.Resolution{Tenant: op.Tenant, OperationID: op.ID, Kind: p.Kind, To: ledger.KindTo(p.Kind),
		RemoteRef: strings.TrimSpace(p.RemoteRef), Reason: strings.TrimSpace(p.Reason)}
	switch {
	case r.To == "":
		return r, refuse(FieldKind, "Choose what happened: confirm succeeded, confirm not applied, a replay, or supersede.")
	case r.Reason == "":
		return r, refuse(FieldReason, "Give your reason: the evidence you relied on.")
	case op.State != ledger.Escalated:
		return r, ledger.Errorf(ledger.EInvalidTransition, "only an ESCALATED operation can be resolved by hand; this one is %s", op.State)
	}
	ct := s.Contract(op.Target)
	switch p.Kind {
	case ledger.KindConfirmSucceeded:
		if r.RemoteRef == "" {
			return r, refuse(FieldRemoteRef, "“Confirm succeeded” needs the target's object id.")
		}
		// Checked before it is sent to the target in a lookup or stored.
		if err := ledger.CheckProviderText("remote_ref", r.RemoteRef); err != nil {
			return r, onField(FieldRemoteRef, err)
		}
	case ledger.KindConfirmNotApplied:
		if r.RemoteRef != "" {
			return r, refuse(FieldRemoteRef, "“Confirm not applied” names no object id.")
		}
	case ledger.KindReplay:
		if r.RemoteRef != "" {
			return r, refuse(FieldRemoteRef, "A replay names no object id.")
		}
		if q := replayQuestion(ct, op, s.now()); !q.Possible {
			return r, refuse(FieldKind, "A same-key replay is not possible for this operation: "+q.Why+".")
		}
	case ledger.KindSupersede:
		if r.RemoteRef != "" {
			return r, refuse(FieldRemoteRef, "A supersede names no object id.")
		}
	}
	events, quarantined, err := s.gather(ctx, op)
	if err != nil {
		return r, err
	}
	evidence := evidenceOf(events, quarantined)
	if w := Warnings(evidence, r.Kind, r.RemoteRef); len(w) > 0 {
		if !p.DespiteEvidence {
			return r, refuse(FieldDespiteEvidence, "The evidence settle holds contradicts this proposal: "+strings.Join(w, " ")+
				" Confirm that you have weighed it, or propose something else.")
		}
		if len(r.Reason)+len(despiteNote) > maxReason {
			return r, refuse(FieldReason, fmt.Sprintf("Shorten your reason to %d characters: settle adds that you weighed the contrary evidence.",
				maxReason-len(despiteNote)))
		}
		r.Reason += despiteNote
	}
	switch p.Kind {
	case ledger.KindConfirmSucceeded:
		if ct != nil && ct.Lookup != nil {
			full, err := s.store.Get(ctx, op.Tenant, op.ID) // the match needs the approved payload
			if err != nil {
				return r, err
			}
			if _, err := confirmObject(ctx, s.client, ct, full, r.RemoteRef); err != nil {
				return r, onField(FieldRemoteRef, err)
			}
		}
	case ledger.KindSupersede:
		if why := supersedeBar(ct, op, evidence); why != "" {
			return r, refuse(FieldKind, why)
		}
		if err := s.checkAbsent(ctx, op); err != nil {
			return r, onField(FieldKind, err)
		}
	}
	return s.store.Propose(ctx, r)
}

// checkAbsent is a supersede's precondition, when proposed and again when
// approved: the target confirms by a lookup that it holds nothing under
// op's reference. Without a lookup there is no second owner's word to
// fall back on: absence cannot be confirmed and supersede is refused.
func (s *Service) checkAbsent(ctx context.Context, op ledger.Operation) error {
	ct := s.Contract(op.Target)
	if ct == nil || ct.Lookup == nil {
		return invalid(NoSupersede(op.Target))
	}
	_, err := confirmAbsent(ctx, s.client, ct, op, s.now())
	return err
}

// NoSupersede says why supersede is not offered for a target.
func NoSupersede(targetName string) string {
	return "Supersede is not offered: the contract for " + targetName +
		" has no lookup, so settle cannot confirm that the target holds nothing under this operation's reference."
}

// Decision is what an approval did.
type Decision struct {
	Operation ledger.Operation // the resolved operation
	Successor ledger.Operation // the operation an approved supersede registered
}

// Approval is what an approver confirms with their approval.
type Approval struct {
	// DespiteEvidence: the approver has read the evidence that
	// contradicts the proposal (Case.Warnings) and approves it all the
	// same. Required when there is any.
	DespiteEvidence bool
	// CheckedAtTarget: the approver checked the proposal's object id at
	// the target themselves, because settle cannot (Case.Unverifiable).
	// Required for "confirm succeeded" on a target without lookup.
	CheckedAtTarget bool
}

// Approve applies the tenant's open proposal id, by the context's actor,
// who must not be its proposer (the ledger's two-person rule). The
// evidence is weighed again as it stands now: a contradiction needs
// a.DespiteEvidence, an object id settle cannot check needs
// a.CheckedAtTarget. A supersede is checked against the target again
// (absence may have changed since it was proposed), and its successor's
// payload is rebound by the contract.
func (s *Service) Approve(ctx context.Context, sc Scope, tenant string, id int64, a Approval) (Decision, error) {
	r, op, err := s.openProposal(ctx, sc, tenant, id)
	if err != nil {
		return Decision{}, err
	}
	actor, err := ledger.ActorOf(ctx)
	if err != nil {
		return Decision{}, err
	}
	if ledger.SamePerson(r.ProposedBy, actor.Subject) {
		return Decision{}, ledger.Errorf(ledger.EForbidden, "nobody approves their own proposal: another owner must")
	}
	events, quarantined, err := s.gather(ctx, op)
	if err != nil {
		return Decision{}, err
	}
	ct := s.Contract(op.Target)
	var notes []string
	if w := Warnings(evidenceOf(events, quarantined), r.Kind, r.RemoteRef); len(w) > 0 {
		if !a.DespiteEvidence {
			return Decision{}, refuse(FieldDespiteEvidence, "The evidence settle holds contradicts this proposal: "+strings.Join(w, " ")+
				" Confirm that you have weighed it, or reject the proposal.")
		}
		notes = append(notes, "confirmed having weighed the contrary evidence")
	}
	if why := Unverifiable(ct, op.Target); r.Kind == ledger.KindConfirmSucceeded && why != "" {
		if !a.CheckedAtTarget {
			return Decision{}, refuse(FieldCheckedAtTarget, "Confirm that you checked object "+ledger.PlainText(r.RemoteRef, 300)+
				" at "+op.Target+" yourself: "+why)
		}
		notes = append(notes, "confirmed having checked object "+ledger.PlainText(r.RemoteRef, 200)+" at "+op.Target+" themselves")
	}
	// The audit keeps what the approver confirmed, with the approval.
	ctx = ledger.WithApprovalNote(ctx, strings.Join(notes, "; "))
	if r.Kind != ledger.KindSupersede {
		done, err := s.store.Approve(ctx, r.Tenant, r.ID)
		return Decision{Operation: done}, err
	}
	if err := s.checkAbsent(ctx, op); err != nil {
		return Decision{}, err
	}
	superseded, successor, err := s.store.ApproveSupersede(ctx, r.Tenant, r.ID, ct.Rebind)
	return Decision{Operation: superseded, Successor: successor}, err
}

// Reject closes the tenant's open proposal id without changing the
// operation, for why (required).
func (s *Service) Reject(ctx context.Context, sc Scope, tenant string, id int64, why string) error {
	why = strings.TrimSpace(why)
	if why == "" {
		return invalid("Give your reason for rejecting it.")
	}
	if _, _, err := s.openProposal(ctx, sc, tenant, id); err != nil {
		return err
	}
	return s.store.Reject(ctx, tenant, id, why)
}

// Withdraw closes the context's actor's own open proposal id, so that
// another can be made; only its proposer withdraws it (EForbidden for
// anyone else, who rejects it instead).
func (s *Service) Withdraw(ctx context.Context, sc Scope, tenant string, id int64, why string) error {
	actor, err := ledger.ActorOf(ctx)
	if err != nil {
		return err
	}
	r, _, err := s.openProposal(ctx, sc, tenant, id)
	if err != nil {
		return err
	}
	if !ledger.SamePerson(r.ProposedBy, actor.Subject) {
		return ledger.Errorf(ledger.EForbidden, "only the proposer withdraws a proposal; reject it instead")
	}
	why = strings.TrimSpace(why)
	if why == "" {
		why = "no reason given"
	}
	return s.store.Reject(ctx, tenant, id, "withdrawn by the proposer: "+why)
}

// OpenProposal returns the open proposal of the tenant's operation id, or
// nil; ENotFound for an operation outside sc.
func (s *Service) OpenProposal(ctx context.Context, sc Scope, tenant, id string) (*ledger.Resolution, error) {
	op, err := s.Operation(ctx, sc, tenant, id)
	if err != nil {
		return nil, err
	}
	return s.openProposalOf(ctx, op)
}

func (s *Service) openProposalOf(ctx context.Context, op ledger.Operation) (*ledger.Resolution, error) {
	list, err := s.store.OpenResolutions(ctx, []string{op.Tenant}, false)
	if err != nil {
		return nil, err
	}
	for _, r := range list {
		if r.OperationID == op.ID {
			return &r, nil
		}
	}
	return nil, nil
}

// openProposal finds the tenant's open proposal id on an operation of sc:
// ENotFound for none, or one on an operation outside sc.
func (s *Service) openProposal(ctx context.Context, sc Scope, tenant string, id int64) (ledger.Resolution, ledger.Operation, error) {
	if !inTenants(sc, tenant) {
		return ledger.Resolution{}, ledger.Operation{}, noProposal(id)
	}
	list, err := s.store.OpenResolutions(ctx, []string{tenant}, false)
	if err != nil {
		return ledger.Resolution{}, ledger.Operation{}, err
	}
	for _, r := range list {
		if r.ID != id {
			continue
		}
		op, err := s.Operation(ctx, sc, r.Tenant, r.OperationID)
		if err != nil {
			return r, op, noProposal(id)
		}
		return r, op, nil
	}
	return ledger.Resolution{}, ledger.Operation{}, noProposal(id)
}

// OpenProposals lists the open proposals on operations of sc, oldest
// first, with their operations (at most 500 proposals are read).
func (s *Service) OpenProposals(ctx context.Context, sc Scope) ([]Open, bool, error) {
	all, tenants := sc.ResolveTenants()
	list, err := s.store.OpenResolutions(ctx, tenants, all)
	if err != nil {
		return nil, false, err
	}
	out := make([]Open, 0, len(list))
	for _, r := range list {
		op, err := s.store.Summary(ctx, r.Tenant, r.OperationID)
		if err != nil {
			return nil, false, err
		}
		if sc.CanResolve(op.Tenant, op.Target) {
			out = append(out, Open{Proposal: r, Operation: op})
		}
	}
	return out, len(list) == 500, nil
}

// Open is an open proposal and the operation it resolves.
type Open struct {
	Proposal  ledger.Resolution
	Operation ledger.Operation
}

func noProposal(id int64) error {
	return ledger.Errorf(ledger.ENotFound, "no open proposal %d", id)
}

func invalid(msg string) error { return ledger.Errorf(ledger.EInvalid, "%s", msg) }
