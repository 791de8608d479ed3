// Package resolve is the application layer for what people do about an
// escalated operation: propose how it ended, approve, reject or withdraw
// a proposal, and read the escalation queue and the runbook's four
// questions. Every rule of those actions lives here; the console and the
// CLI decode their input, call a Service and show its answer.
//
// The person acting is the ledger.Actor in the context (the ledger
// records it and applies the two-person rule); what they may see and
// resolve is their Scope. An operation outside the scope reads exactly
// like one that does not exist (ENotFound).
package resolve

import (
	"context"
	"errors"
	"time"

	"settle/ledger"
	"settle/target"
)

// Store is what the service reads and writes; both stores implement it.
type Store interface {
	ledger.Store
	ledger.ResolutionStore
	ledger.QueueLister // the escalation queue's pages
	// ListQuarantine is the inbox's quarantine (ledger.InboxStore): the
	// quarantined events that name an operation are part of its evidence.
	ListQuarantine(ctx context.Context, f ledger.QuarantineFilter) ([]ledger.QuarantineItem, error)
}

// Contracts resolves target names to contracts (*target.Set does).
type Contracts interface {
	Get(name string) (*target.Contract, bool)
}

// Scope is what a person may see and resolve: the tenants in which they
// resolve some target, and each target of a tenant. The console's
// principal gives one per request; the CLI's operator resolves every
// target of the one tenant they name (TenantScope).
type Scope interface {
	// ResolveTenants returns all=true for every tenant, else the tenants.
	ResolveTenants() (all bool, tenants []string)
	// CanResolve reports whether target's operations of tenant are theirs.
	CanResolve(tenant, target string) bool
}

// TenantScope resolves every target of one tenant: the CLI's operator,
// who holds the database's credentials and names the tenant.
type TenantScope string

// ResolveTenants implements Scope.
func (t TenantScope) ResolveTenants() (bool, []string) { return false, []string{string(t)} }

// CanResolve implements Scope.
func (t TenantScope) CanResolve(tenant, _ string) bool { return tenant == string(t) }

// Service holds every rule of a person's action on the escalation queue.
type Service struct {
	store     Store
	contracts Contracts
	client    *target.Client
	now       func() time.Time
}

// New returns the service over store. contracts may be nil (no target is
// then asked, and what needs a contract is refused or not offered);
// client nil asks targets with no credentials or tenant parameters; now
// nil is time.Now.
func New(store Store, contracts Contracts, client *target.Client, now func() time.Time) *Service {
	if client == nil {
		client = target.NewClient(target.ClientOptions{})
	}
	if now == nil {
		now = time.Now
	}
	return &Service{store: store, contracts: contracts, client: client, now: now}
}

// Now is the service's clock.
func (s *Service) Now() time.Time { return s.now() }

// Contract is target's contract, or nil when none is loaded.
func (s *Service) Contract(name string) *target.Contract {
	if s.contracts == nil {
		return nil
	}
	c, _ := s.contracts.Get(name)
	return c
}

// Operation reads the tenant's operation for a person of sc: ENotFound
// for anything outside the scope, so that another tenant's or another
// target's operation reads exactly like one that does not exist. The
// payload is not read (Summary).
func (s *Service) Operation(ctx context.Context, sc Scope, tenant, id string) (ledger.Operation, error) {
	if !inTenants(sc, tenant) {
		return ledger.Operation{}, notFound()
	}
	op, err := s.store.Summary(ctx, tenant, id)
	switch ledger.ErrorCode(err) {
	case "":
	case ledger.ENotFound, ledger.EInvalid:
		return ledger.Operation{}, notFound()
	default:
		return ledger.Operation{}, err
	}
	if !sc.CanResolve(op.Tenant, op.Target) {
		return ledger.Operation{}, notFound()
	}
	return op, nil
}

func inTenants(sc Scope, tenant string) bool {
	all, tenants := sc.ResolveTenants()
	if all {
		return tenant != ""
	}
	for _, t := range tenants {
		if t == tenant {
			return true
		}
	}
	return false
}

func notFound() error { return ledger.Errorf(ledger.ENotFound, "no such operation") }

// The form fields a refusal can be about (FieldOf).
const (
	FieldKind            = "kind"
	FieldRemoteRef       = "remote_ref"
	FieldReason          = "reason"
	FieldDespiteEvidence = "despite_evidence"
	FieldCheckedAtTarget = "checked_at_target"
)

// fieldError is an EInvalid refusal about one field of a person's input,
// so that a form can show it beside the field; it is a *ledger.Error to
// everything else.
type fieldError struct {
	field string
	err   *ledger.Error
}

func (e *fieldError) Error() string { return e.err.Error() }
func (e *fieldError) Unwrap() error { return e.err }

// refuse is an EInvalid refusal of field, in words for people.
func refuse(field, msg string) error {
	return &fieldError{field: field, err: ledger.Errorf(ledger.EInvalid, "%s", msg)}
}

// onField ties err, when it is a refusal in words, to field.
func onField(field string, err error) error {
	var le *ledger.Error
	if err == nil || !errors.As(err, &le) || le.Code != ledger.EInvalid {
		return err
	}
	var fe *fieldError
	if errors.As(err, &fe) {
		return err
	}
	return &fieldError{field: field, err: le}
}

// FieldOf names the form field a refusal is about (one of the Field…
// constants), or "" for a refusal of the whole action.
func FieldOf(err error) string {
	var fe *fieldError
	if errors.As(err, &fe) {
		return fe.field
	}
	return ""
}
