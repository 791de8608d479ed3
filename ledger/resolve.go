package ledger

import (
	"context"
	"errors"
	"time"
)

// ResolutionTx is what a store does inside the one transaction of a
// proposal, approval or rejection: SQL only. The rules that decide what
// happens (who may act, the two-person rule, approve-if-unchanged) are
// ProposeIn, ApproveIn and RejectIn, shared by every store.
type ResolutionTx interface {
	// Operation returns the tenant's operation, or ENotFound.
	Operation(ctx context.Context, tenant, id string) (Operation, error)
	// InsertProposal stores r as an open proposal and returns it with its
	// id; ErrDuplicateKey when the operation already has an open proposal.
	InsertProposal(ctx context.Context, r Resolution) (Resolution, error)
	// LockOpenProposal returns the tenant's open proposal id, held against
	// other deciders until the transaction ends; found is false when the
	// tenant has no such open proposal.
	LockOpenProposal(ctx context.Context, tenant string, id int64) (r Resolution, found bool, err error)
	// ApplyIfUnchanged applies o, with its event and the tenant's callback,
	// only if the operation is still in o.From at fence o.Fence; ok is
	// false, and nothing written, when it is not.
	ApplyIfUnchanged(ctx context.Context, o Outcome, at time.Time) (op Operation, ok bool, err error)
	// Decide records r's decision: DecidedBy, DecidedByName, DecidedAt,
	// Decision and DecisionWhy.
	Decide(ctx context.Context, r Resolution) error
	// RecordAction appends a to the record of human actions.
	RecordAction(ctx context.Context, a Action) error
	// CreateTx creates a supersede's successor in the same transaction.
	CreateTx
}

// lockOpenProposal is LockOpenProposal with ENotFound for no such open
// proposal.
func lockOpenProposal(ctx context.Context, tx ResolutionTx, tenant string, id int64) (Resolution, error) {
	r, found, err := tx.LockOpenProposal(ctx, tenant, id)
	if err == nil && !found {
		err = Errorf(ENotFound, "no open proposal %d", id)
	}
	return r, err
}

// Rebinder replaces the reference a bound payload carries with a new
// remote key (a target contract's Rebind); deterministic, as
// NewOperation.Bind must be.
type Rebinder func(payload []byte, remoteKey, tenant string) ([]byte, error)

// ProposeIn records, in tx, a proposal by the context's actor: the
// operation must be the tenant's and ESCALATED, the proposal valid.
func ProposeIn(ctx context.Context, tx ResolutionTx, r Resolution, now time.Time) (Resolution, error) {
	actor, err := ActorOf(ctx)
	if err != nil {
		return r, err
	}
	op, err := tx.Operation(ctx, r.Tenant, r.OperationID)
	if err != nil {
		return r, err
	}
	r.Tenant, r.OperationID, r.Fence = op.Tenant, op.ID, op.Fence
	r.ProposedBy, r.ProposedByName, r.ProposedAt = actor.Subject, actor.Name, now.UTC()
	r.DecidedBy, r.DecidedByName, r.DecidedAt, r.Decision, r.DecisionWhy = "", "", nil, "", ""
	if r.Kind == "" {
		r.Kind = kindOf(r.To)
	}
	if err := ValidateProposal(op, r, now); err != nil {
		return r, err
	}
	got, err := tx.InsertProposal(ctx, r)
	if errors.Is(err, ErrDuplicateKey) {
		return r, Errorf(EConflict, "this operation already has an open proposal; approve or reject it first")
	}
	if err != nil {
		return r, err
	}
	a, err := NewAction(ctx, ActionPropose, got.Tenant, formatID(got.ID), got.OperationID, got.Reason, now)
	if err != nil {
		return r, err
	}
	return got, tx.RecordAction(ctx, a)
}

// Approval is what ApproveIn decided. A stale approval is still committed:
// the proposal is closed as stale, so that nobody approves it again.
type Approval struct {
	Operation Operation // the resolved operation, when approved
	Successor Operation // the operation an approved supersede created
	Stale     bool      // the operation changed after the proposal
}

// Err is the caller's answer for a committed approval: nil, or EStaleFence
// for a stale one.
func (a Approval) Err() error {
	if a.Stale {
		return Errorf(EStaleFence, "the operation changed after the proposal; propose again")
	}
	return nil
}

// ApproveIn decides, in tx, an approval of the tenant's open proposal id by
// the context's actor. The two-person rule compares the persons the stable
// subjects stand for (SamePerson): the proposer under another display
// name, or acting from the CLI with --as, is still the proposer
// (EForbidden); two people who share a name are two people. The proposal is applied only
// if the operation is unchanged since it was proposed (still ESCALATED at
// the same fence); otherwise it is closed as stale. Any error means: roll
// back; a stale Approval means: commit, then answer Approval.Err.
//
// A supersede proposal needs rebind (EInvalid without one, and a non-nil
// rebind is refused for other kinds): its successor (Successor) is created
// by CreateIn in tx after the transition, and each names the other in its
// record — the event's evidence "superseded_by", an approval action on the
// successor "supersedes". If the successor's intent already exists the
// approval fails and nothing is written.
func ApproveIn(ctx context.Context, tx ResolutionTx, tenant string, id int64, rebind Rebinder, now time.Time) (Approval, error) {
	actor, err := ActorOf(ctx)
	if err != nil {
		return Approval{}, err
	}
	r, err := lockOpenProposal(ctx, tx, tenant, id)
	if err != nil {
		return Approval{}, err
	}
	if SamePerson(r.ProposedBy, actor.Subject) {
		return Approval{}, Errorf(EForbidden, "nobody approves their own proposal")
	}
	if (r.Kind == KindSupersede) != (rebind != nil) {
		return Approval{}, Errorf(EInvalid, "a supersede proposal, and only one, is approved with its successor's binding")
	}
	outcome := ApprovalOutcome(r, actor)
	var superseded, next Operation
	if r.Kind == KindSupersede {
		if superseded, err = tx.Operation(ctx, r.Tenant, r.OperationID); err != nil {
			return Approval{}, err
		}
		n := Successor(superseded, rebind)
		if next, err = Prepare(n, now); err != nil {
			return Approval{}, err
		}
		outcome.Evidence["superseded_by"] = next.ID
		outcome.Evidence["successor_intent_ref"] = next.IntentRef
	}
	op, ok, err := tx.ApplyIfUnchanged(ctx, outcome, now)
	if err != nil {
		return Approval{}, err
	}
	if ok && r.Kind == KindSupersede {
		if next, err = createSuccessor(ctx, tx, r, superseded, next, rebind, now); err != nil {
			return Approval{}, err
		}
	}
	r.Decision, r.DecisionWhy = DecisionApproved, ""
	reason := "approved"
	if note := approvalNote(ctx); note != "" {
		reason += "; " + note
	}
	if !ok {
		r.Decision, r.DecisionWhy = DecisionStale, "the operation changed after the proposal"
		reason = "stale: " + r.DecisionWhy
		next = Operation{}
	}
	at := now.UTC()
	r.DecidedBy, r.DecidedByName, r.DecidedAt = actor.Subject, actor.Name, &at
	if err := tx.Decide(ctx, r); err != nil {
		return Approval{}, err
	}
	a, err := NewAction(ctx, ActionApprove, r.Tenant, formatID(r.ID), r.OperationID, reason, now)
	if err != nil {
		return Approval{}, err
	}
	if err := tx.RecordAction(ctx, a); err != nil {
		return Approval{}, err
	}
	return Approval{Operation: op, Successor: next, Stale: !ok}, nil
}

// createSuccessor creates the prepared successor next of the superseded
// operation in tx, and records on it which operation it supersedes. An
// existing intent (a client's own, or any other) is never reused: the
// approval fails, so that nothing it wrote stands.
func createSuccessor(ctx context.Context, tx ResolutionTx, r Resolution, superseded Operation, next Operation, rebind Rebinder, now time.Time) (Operation, error) {
	n := Successor(superseded, rebind)
	c, err := CreateIn(ctx, tx, n, next)
	if err != nil {
		return Operation{}, err
	}
	if !c.Created {
		return Operation{}, Errorf(EConflict, "the successor's intent %s already exists; nothing was approved", next.IntentRef)
	}
	a, err := NewAction(ctx, ActionApprove, r.Tenant, formatID(r.ID), c.Operation.ID, "supersedes "+superseded.ID, now)
	if err != nil {
		return Operation{}, err
	}
	return c.Operation, tx.RecordAction(ctx, a)
}

// RejectIn closes, in tx, the tenant's open proposal id as rejected by the
// context's actor, for why. The proposer may withdraw their own proposal
// this way: a rejection changes no operation.
func RejectIn(ctx context.Context, tx ResolutionTx, tenant string, id int64, why string, now time.Time) error {
	actor, err := ActorOf(ctx)
	if err != nil {
		return err
	}
	if why == "" || len(why) > 500 {
		return Errorf(EInvalid, "a rejection needs its reason (at most 500 characters)")
	}
	r, err := lockOpenProposal(ctx, tx, tenant, id)
	if err != nil {
		return err
	}
	at := now.UTC()
	r.DecidedBy, r.DecidedByName, r.DecidedAt = actor.Subject, actor.Name, &at
	r.Decision, r.DecisionWhy = DecisionRejected, why
	if err := tx.Decide(ctx, r); err != nil {
		return err
	}
	a, err := NewAction(ctx, ActionReject, r.Tenant, formatID(r.ID), r.OperationID, why, now)
	if err != nil {
		return err
	}
	return tx.RecordAction(ctx, a)
}

type approvalNoteKey struct{}

// WithApprovalNote carries what an approver confirmed explicitly (that
// they weighed contrary evidence, that they checked an object id at the
// target), to be recorded with the approval's action: its reason reads
// "approved; " and the note. Payload-free words only.
func WithApprovalNote(ctx context.Context, note string) context.Context {
	return context.WithValue(ctx, approvalNoteKey{}, note)
}

func approvalNote(ctx context.Context) string {
	n, _ := ctx.Value(approvalNoteKey{}).(string)
	return n
}
