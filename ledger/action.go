package ledger

import (
	"context"
	"strconv"
	"time"
	"unicode/utf8"
)

// Action is the append-only record of one human action: who (the actor's
// stable subject, display name and role), what (its kind and object), why
// and under which request. A store writes it in the same transaction as the
// change it records, so no change is left without its author.
type Action struct {
	ID          int64
	Tenant      string
	At          time.Time
	Subject     string // the actor's stable identity, e.g. "oidc:…" or "cli:ada"
	Name        string // the actor's display name at the time
	Role        string // the role the action was taken under
	Kind        ActionKind
	Object      string // the proposal, token or quarantine id, or the tenant for a callback
	OperationID string // the operation concerned, "" when none
	Reason      string // the actor's reason or decision, payload-free
	RequestID   string // "" from the CLI
}

// ActionKind names what a person did.
type ActionKind string

// The human actions settle records.
const (
	ActionPropose           ActionKind = "resolution.propose"
	ActionApprove           ActionKind = "resolution.approve"
	ActionReject            ActionKind = "resolution.reject"
	ActionQuarantineResolve ActionKind = "quarantine.resolve"
	ActionTokenCreate       ActionKind = "token.create"
	ActionTokenRevoke       ActionKind = "token.revoke"
	ActionCallbackSet       ActionKind = "callback.set"
	ActionCallbackRemove    ActionKind = "callback.remove"
	// ActionCallbackRetry and ActionEscalationNoticeRetry queue a tenant's
	// given-up callbacks or escalation notices again; the object is the
	// tenant, the reason how many.
	ActionCallbackRetry         ActionKind = "callback.retry"
	ActionEscalationNoticeRetry ActionKind = "escalation_notice.retry"
)

// ActionKinds lists every kind of human action settle records, for the
// words that name them (a test holds every page's words to this list).
var ActionKinds = []ActionKind{
	ActionPropose, ActionApprove, ActionReject,
	ActionQuarantineResolve, ActionQuarantineLink, ActionFindingAcknowledge,
	ActionTenantCreate, ActionTokenCreate, ActionTokenRevoke,
	ActionCallbackSet, ActionCallbackRemove, ActionCallbackRetry, ActionEscalationNoticeRetry,
	ActionTenantParamSet, ActionTenantParamUnset,
}

// maxActionReason bounds an Action's Reason, in bytes.
const maxActionReason = 500

// MaxActions bounds one Actions answer.
const MaxActions = 500

// ActionFilter selects the actions Actions returns.
type ActionFilter struct {
	Tenant string // required, unless Unattributed
	// Unattributed selects the actions on items of no tenant (tenant "":
	// an unattributed quarantine item) instead of a tenant's.
	Unattributed bool
	OperationID  string // only this operation's actions when set
	Limit        int    // at most this many; 0 or more than MaxActions means MaxActions
}

// ActionStore reads the record of human actions. The stores write it
// themselves, inside each action's own transaction.
type ActionStore interface {
	// Actions returns the tenant's actions, newest first, at most f.Limit
	// (bounded by MaxActions). EInvalid without a valid tenant.
	Actions(ctx context.Context, f ActionFilter) ([]Action, error)
}

// Validate checks f and returns it with its limit bounded.
func (f ActionFilter) Validate() (ActionFilter, error) {
	switch {
	case f.Unattributed && f.Tenant != "":
		return f, Errorf(EInvalid, "unattributed actions belong to no tenant")
	case !f.Unattributed && !ValidTenant(f.Tenant):
		return f, Errorf(EInvalid, "listing actions needs a valid tenant")
	}
	if f.Limit <= 0 || f.Limit > MaxActions {
		f.Limit = MaxActions
	}
	return f, nil
}

// NewAction builds the record of an action by the actor ctx carries: EInvalid
// when ctx carries none (or an invalid one), so that a store refuses the
// change before writing anything. tenant is the tenant the action belongs to
// ("" for an unattributed quarantine item).
func NewAction(ctx context.Context, kind ActionKind, tenant, object, operationID, reason string, at time.Time) (Action, error) {
	a, err := ActorOf(ctx)
	if err != nil {
		return Action{}, err
	}
	// Callers validate their reasons; this only keeps a record bounded,
	// cut on a character boundary.
	if n := maxActionReason; len(reason) > n {
		for n > 0 && !utf8.RuneStart(reason[n]) {
			n--
		}
		reason = reason[:n]
	}
	return Action{
		Tenant: tenant, At: at.UTC().Truncate(time.Microsecond),
		Subject: a.Subject, Name: a.Name, Role: a.Role, RequestID: a.RequestID,
		Kind: kind, Object: object, OperationID: operationID, Reason: reason,
	}, nil
}

// formatID is how a numeric id is written as an Action's Object.
func formatID(id int64) string { return strconv.FormatInt(id, 10) }
