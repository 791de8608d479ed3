package ledger

import (
	"context"
	"time"
)

// Resolution is a person's proposal to settle an ESCALATED operation by
// hand, and its decision. Nobody approves their own proposal: applying it
// takes a second person (the paper's runbook: "who approves a manual
// resolution"), told apart by stable subject, never by display name.
type Resolution struct {
	ID          int64
	Tenant      string
	OperationID string
	Fence       int64  // the operation's fence when proposed; approval needs it unchanged
	To          State  // SUCCEEDED or FAILED_TERMINAL
	RemoteRef   string // the target's object id, required for SUCCEEDED
	Reason      string // the evidence the proposer relied on, in words
	// ProposedBy is the proposer's stable subject (Actor.Subject), set by
	// Propose from the context's actor; ProposedByName its display name.
	ProposedBy     string
	ProposedByName string
	ProposedAt     time.Time
	// DecidedBy is the decider's subject, DecidedByName the display name.
	DecidedBy     string
	DecidedByName string
	DecidedAt     *time.Time
	Decision      string // "" while open, then "approved", "rejected" or "stale"
	DecisionWhy   string // the rejecter's reason, or why it went stale
}

// Decisions a resolution ends with.
const (
	DecisionApproved = "approved"
	DecisionRejected = "rejected"
	DecisionStale    = "stale"
)

// ResolutionStore keeps manual resolutions of ESCALATED operations. Approve
// is the only way out of ESCALATED. Propose, Approve and Reject are human
// actions: they take the Actor from ctx (EInvalid without one, nothing
// written) and record an Action in the same transaction. The rules live
// in this package (ProposeIn, ApproveIn, RejectIn); a store supplies the
// transaction and its SQL as a ResolutionTx.
type ResolutionStore interface {
	// Propose records an open proposal by the context's actor for an
	// ESCALATED operation of the tenant; r.ProposedBy and ProposedByName
	// are ignored. EInvalidTransition when it is not ESCALATED, EConflict
	// when it already has an open proposal, EInvalid for a bad proposal.
	Propose(ctx context.Context, r Resolution) (Resolution, error)
	// Approve applies an open proposal of the tenant, by an actor whose
	// subject is not the proposer's (EForbidden otherwise), in one
	// transaction with its event and the tenant's callback. EStaleFence
	// (and the proposal marked stale) when the operation changed since the
	// proposal; ENotFound for no open proposal of that tenant.
	Approve(ctx context.Context, tenant string, id int64) (Operation, error)
	// Reject closes an open proposal of the tenant without changing the
	// operation; why is required.
	Reject(ctx context.Context, tenant string, id int64, why string) error
	// Resolutions lists the tenant's proposals, newest first; only open ones
	// when open.
	Resolutions(ctx context.Context, tenant string, open bool) ([]Resolution, error)
}

// ValidateProposal checks a proposal against the operation it resolves.
func ValidateProposal(op Operation, r Resolution) error {
	switch {
	case op.State != Escalated:
		return Errorf(EInvalidTransition, "only an ESCALATED operation can be resolved by hand; this one is %s", op.State)
	case r.To != Succeeded && r.To != FailedTerminal:
		return Errorf(EInvalid, "a manual resolution ends in SUCCEEDED or FAILED_TERMINAL")
	case r.To == Succeeded && r.RemoteRef == "":
		return Errorf(EInvalid, "SUCCEEDED needs the target's object id (remote_ref) that confirms it")
	case r.Reason == "" || len(r.Reason) > 500:
		return Errorf(EInvalid, "a manual resolution needs its reason (at most 500 characters)")
	case r.ProposedBy == "" || len(r.ProposedBy) > 300:
		return Errorf(EInvalid, "a manual resolution needs who proposes it")
	}
	return nil
}

// ApprovalOutcome is the transition an approved resolution applies: the
// approver's subject is the event's actor, and both people (subject and
// name), the approver's role and the request id are its evidence.
func ApprovalOutcome(r Resolution, approver Actor) Outcome {
	return Outcome{
		Tenant: r.Tenant, OperationID: r.OperationID, Fence: r.Fence, From: Escalated, To: r.To,
		RemoteRef: r.RemoteRef, Actor: approver.Subject, Reason: "manual resolution: " + r.Reason,
		Evidence: map[string]any{
			"resolution_id": r.ID,
			"proposed_by":   r.ProposedBy, "proposed_by_name": r.ProposedByName,
			"approved_by": approver.Subject, "approved_by_name": approver.Name,
			"role": approver.Role, "request_id": approver.RequestID,
		},
	}
}
