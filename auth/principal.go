package auth

import (
	"context"
	"slices"
)

// Role is what a binding grants. Roles come from a configurable claim of
// the sign-in (e.g. "groups") mapped in config to one of these.
type Role string

// The console's roles.
const (
	// Support reads operations and their stories; it changes nothing.
	Support Role = "support"
	// Owner works the escalation queue and quarantine of the targets it
	// owns, and may read their payloads.
	Owner Role = "owner"
	// Manager reads the per-tenant figures.
	Manager Role = "manager"
	// Admin manages API tokens, callbacks and settings, and may read
	// payloads.
	Admin Role = "admin"
)

// Valid reports whether r is one of the console's roles.
func (r Role) Valid() bool {
	switch r {
	case Support, Owner, Manager, Admin:
		return true
	}
	return false
}

// Permission names one thing a route does. Every console route declares
// the permission it needs; the server checks it on every request.
type Permission string

// The console's permissions.
const (
	ViewOperations Permission = "operations.view"    // search, list, read the story
	ViewPayload    Permission = "operations.payload" // the approved payload itself
	Resolve        Permission = "escalations.resolve"
	ReviewInbox    Permission = "quarantine.review"
	ViewFigures    Permission = "figures.view"
	ManageTokens   Permission = "tokens.manage"
	ManageHooks    Permission = "callbacks.manage"
)

// permits is the one table of what each role may do.
var permits = map[Role][]Permission{
	Support: {ViewOperations},
	Owner:   {ViewOperations, ViewPayload, Resolve, ReviewInbox},
	Manager: {ViewOperations, ViewFigures},
	Admin:   {ViewOperations, ViewPayload, ManageTokens, ManageHooks, ReviewInbox},
}

// Grants reports whether role r carries permission p.
func (r Role) Grants(p Permission) bool { return slices.Contains(permits[r], p) }

// Binding is one role granted over some tenants and, for owners, some
// targets. Nil Tenants (or Targets) means all of them.
type Binding struct {
	Role    Role
	Tenants []string
	Targets []string
}

func (b Binding) covers(tenant, target string) bool {
	if b.Tenants != nil && !slices.Contains(b.Tenants, tenant) {
		return false
	}
	return target == "" || b.Targets == nil || slices.Contains(b.Targets, target)
}

// Principal is a signed-in console user.
type Principal struct {
	Subject  string // stable: "oidc:<sub>" or "demo:<user>"
	Name     string
	Email    string
	Bindings []Binding
}

// Can reports whether p may do perm on the tenant's records of target
// ("" when the action is not about one target).
func (p *Principal) Can(perm Permission, tenant, target string) bool {
	if p == nil {
		return false
	}
	for _, b := range p.Bindings {
		if b.Role.Grants(perm) && b.covers(tenant, target) {
			return true
		}
	}
	return false
}

// RoleFor returns the role under which p may do perm on the tenant's
// records of target, for the event log; "" when it may not.
func (p *Principal) RoleFor(perm Permission, tenant, target string) Role {
	if p == nil {
		return ""
	}
	for _, b := range p.Bindings {
		if b.Role.Grants(perm) && b.covers(tenant, target) {
			return b.Role
		}
	}
	return ""
}

// Tenants returns the tenants p may exercise perm on: all=true when some
// binding covers every tenant, otherwise the sorted list (possibly empty).
func (p *Principal) Tenants(perm Permission) (all bool, tenants []string) {
	if p == nil {
		return false, nil
	}
	for _, b := range p.Bindings {
		if !b.Role.Grants(perm) {
			continue
		}
		if b.Tenants == nil {
			return true, nil
		}
		tenants = append(tenants, b.Tenants...)
	}
	slices.Sort(tenants)
	return false, slices.Compact(tenants)
}

// Has reports whether p may exercise perm anywhere: the console shows a
// page (or a link to it) only when this holds.
func (p *Principal) Has(perm Permission) bool {
	all, ts := p.Tenants(perm)
	return all || len(ts) > 0
}

type principalKey struct{}

// NewContext returns ctx carrying the signed-in principal.
func NewContext(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the principal ctx carries, or nil when nobody is
// signed in.
func FromContext(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}
