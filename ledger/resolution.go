package ledger

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Resolution is a person's proposal to settle an ESCALATED operation by
// hand, and its decision. Nobody approves their own proposal: applying it
// takes a second person (the paper's runbook: "who approves a manual
// resolution"), told apart by stable subject, never by display name.
type Resolution struct {
	ID          int64
	Tenant      string
	OperationID string
	Fence       int64 // the operation's fence when proposed; approval needs it unchanged
	// Kind is what the proposal asks for; To follows from it (KindTo).
	// Propose fills in a missing Kind from To, for the CLI's proposals.
	Kind      ResolutionKind
	To        State  // SUCCEEDED, FAILED_TERMINAL, or UNKNOWN for a replay
	RemoteRef string // the target's object id, required for SUCCEEDED
	Reason    string // the evidence the proposer relied on, in words
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

// ResolutionKind names what a proposal asks the second owner to approve.
type ResolutionKind string

// The kinds of proposal.
const (
	// KindConfirmSucceeded: the target holds the object (RemoteRef); the
	// operation becomes SUCCEEDED.
	KindConfirmSucceeded ResolutionKind = "confirm_succeeded"
	// KindConfirmNotApplied: the target did not apply it; FAILED_TERMINAL.
	KindConfirmNotApplied ResolutionKind = "confirm_not_applied"
	// KindReplay authorises exactly one same-key replay: approval hands
	// the operation back to the reconciler (ESCALATED → UNKNOWN, due at
	// once, Reason ReasonReplayAuthorised), which replays once and
	// escalates again if that answer is inconclusive.
	KindReplay ResolutionKind = "replay"
	// KindSupersede: the target confirms it holds no object carrying the
	// operation's reference; the operation becomes FAILED_TERMINAL and, in
	// the same transaction, a successor intent (SupersedeIntent) is
	// created for the client to pick up, under a new remote key.
	KindSupersede ResolutionKind = "supersede"
)

// ResolutionKinds lists the kinds in the order the console offers them.
var ResolutionKinds = []ResolutionKind{KindConfirmSucceeded, KindConfirmNotApplied, KindReplay, KindSupersede}

// KindTo is the state an approved proposal of kind k moves the operation
// to; "" for an unknown kind.
func KindTo(k ResolutionKind) State {
	switch k {
	case KindConfirmSucceeded:
		return Succeeded
	case KindConfirmNotApplied, KindSupersede:
		return FailedTerminal
	case KindReplay:
		return Unknown
	}
	return ""
}

// kindOf is the kind a proposal that names only its end state asks for.
func kindOf(to State) ResolutionKind {
	switch to {
	case Succeeded:
		return KindConfirmSucceeded
	case FailedTerminal:
		return KindConfirmNotApplied
	}
	return ""
}

// ReasonReplayAuthorised is the reason an approved replay proposal leaves
// on the operation: the reconciler's one-shot marker. The reconciler's
// next record replaces it, so the replay happens once.
const ReasonReplayAuthorised = "same-key replay authorised by two owners"

// ReplayOpen reports whether a same-key replay of op is still inside its
// documented window at now, with margin to spare: the window was
// documented, something was sent, and RetryWindowEnd − margin is later.
func ReplayOpen(op Operation, margin time.Duration, now time.Time) bool {
	return op.RetryWindow > 0 && op.FirstClaimedAt != nil && now.Before(op.RetryWindowEnd.Add(-margin))
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
	// ApproveSupersede is Approve for a supersede proposal (Approve refuses
	// one, EInvalid): with the transition it creates, in the same
	// transaction, the successor (Successor, its payload rebound by
	// rebind), and returns both. EConflict, nothing written, when the
	// successor's intent exists already.
	ApproveSupersede(ctx context.Context, tenant string, id int64, rebind Rebinder) (superseded, successor Operation, err error)
	// Reject closes an open proposal of the tenant without changing the
	// operation; why is required.
	Reject(ctx context.Context, tenant string, id int64, why string) error
	// Resolutions lists the tenant's proposals, newest first; only open ones
	// when open.
	Resolutions(ctx context.Context, tenant string, open bool) ([]Resolution, error)
	// OpenResolutions lists the open proposals of the given tenants (of
	// every tenant when all), oldest first, at most 500: the proposals
	// view of a person who owns targets in several tenants.
	OpenResolutions(ctx context.Context, tenants []string, all bool) ([]Resolution, error)
}

// ValidateProposal checks a proposal against the operation it resolves,
// at now. A replay is accepted only while the ledger's own window is open
// (the console also holds the contract's margin back; the reconciler
// checks the window again before it replays).
func ValidateProposal(op Operation, r Resolution, now time.Time) error {
	switch {
	case op.State != Escalated:
		return Errorf(EInvalidTransition, "only an ESCALATED operation can be resolved by hand; this one is %s", op.State)
	case KindTo(r.Kind) == "" || KindTo(r.Kind) != r.To:
		return Errorf(EInvalid, "a manual resolution confirms success, confirms it was not applied, authorises one replay, or supersedes")
	case (r.Kind == KindReplay || r.Kind == KindSupersede) && r.RemoteRef != "":
		return Errorf(EInvalid, "a replay or supersede proposal names no object id")
	case r.Kind == KindReplay && !ReplayOpen(op, 0, now):
		return Errorf(EInvalid, "the same-key replay window is closed (or was never documented): a replay is no longer safe")
	case r.To == Succeeded && r.RemoteRef == "":
		return Errorf(EInvalid, "SUCCEEDED needs the target's object id (remote_ref) that confirms it")
	case r.Reason == "" || len(r.Reason) > 500:
		return Errorf(EInvalid, "a manual resolution needs its reason (at most 500 characters)")
	case !utf8.ValidString(r.Reason) || strings.ContainsRune(r.Reason, 0):
		return Errorf(EInvalid, "reason must be valid UTF-8 without NUL characters")
	case r.ProposedBy == "" || len(r.ProposedBy) > 300:
		return Errorf(EInvalid, "a manual resolution needs who proposes it")
	}
	if r.RemoteRef != "" {
		// The object id a person copies from a dashboard is held to the
		// rule of the ids a target returns: it becomes the operation's
		// remote_ref, which the stores and every screen must be able to take.
		return CheckProviderText("remote_ref", r.RemoteRef)
	}
	return nil
}

// ApprovalOutcome is the transition an approved resolution applies: the
// approver's subject is the event's actor, and both people (subject and
// name), the approver's role and the request id are its evidence.
// An approved replay carries ReasonReplayAuthorised as its reason, the
// reconciler's marker; the proposer's reason is in the evidence.
func ApprovalOutcome(r Resolution, approver Actor) Outcome {
	reason := "manual resolution: " + r.Reason
	if r.Kind == KindReplay {
		reason = ReasonReplayAuthorised
	}
	return Outcome{
		Tenant: r.Tenant, OperationID: r.OperationID, Fence: r.Fence, From: Escalated, To: r.To,
		RemoteRef: r.RemoteRef, Actor: approver.Subject, Reason: reason,
		Evidence: map[string]any{
			"resolution_id": r.ID, "kind": string(r.Kind), "proposal_reason": r.Reason,
			"proposed_by": r.ProposedBy, "proposed_by_name": r.ProposedByName,
			"approved_by": approver.Subject, "approved_by_name": approver.Name,
			"role": approver.Role, "request_id": approver.RequestID,
		},
	}
}

// ResolutionDriver is the SQL of proposals and their decisions.
type ResolutionDriver interface {
	// ResolutionInsert stores r as an open proposal and returns it with its
	// id; ErrDuplicateKey when the operation has an open proposal.
	ResolutionInsert(ctx context.Context, r Resolution) (Resolution, error)
	// ResolutionLockOpen returns the tenant's open proposal id, held
	// against other deciders until the transaction ends.
	ResolutionLockOpen(ctx context.Context, tenant string, id int64) (r Resolution, found bool, err error)
	// ResolutionDecide records r's decision.
	ResolutionDecide(ctx context.Context, r Resolution) error
	// ResolutionList returns the tenant's proposals (open ones only, when
	// openOnly), newest first, at most 500.
	ResolutionList(ctx context.Context, tenant string, openOnly bool) ([]Resolution, error)
	// ResolutionListOpen returns the open proposals of tenants (of every
	// tenant, when all), oldest first, at most 500.
	ResolutionListOpen(ctx context.Context, tenants []string, all bool) ([]Resolution, error)
}

// Resolutions implements ResolutionStore.
func (l *Ledger) Resolutions(ctx context.Context, tenant string, open bool) ([]Resolution, error) {
	rs, err := l.d.ResolutionList(ctx, tenant, open)
	if err != nil {
		return nil, fmt.Errorf("resolutions: %w", err)
	}
	return rs, nil
}

// OpenResolutions implements ResolutionStore.
func (l *Ledger) OpenResolutions(ctx context.Context, tenants []string, all bool) ([]Resolution, error) {
	if tenants == nil {
		tenants = []string{}
	}
	rs, err := l.d.ResolutionListOpen(ctx, tenants, all)
	if err != nil {
		return nil, fmt.Errorf("open resolutions: %w", err)
	}
	return rs, nil
}
