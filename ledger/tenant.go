package ledger

import (
	"context"
	"time"
)

// Tenant is a tenant settle knows: one an administrator created on
// purpose. API tokens are made only for known tenants, so that a typo
// cannot become a working token for a tenant nobody meant.
type Tenant struct {
	ID        string
	CreatedAt time.Time
}

// ActionTenantCreate records that a person created a tenant; the object is
// the tenant.
const ActionTenantCreate ActionKind = "tenant.create"

// TenantStore keeps the list of known tenants. Both stores implement it.
type TenantStore interface {
	// CreateTenant adds tenant to the known tenants and records the
	// tenant.create action by the context's actor: EInvalid for a bad name
	// or without an actor, EConflict when the tenant is already known.
	CreateTenant(ctx context.Context, tenant string, at time.Time) error
	// ListTenants returns every known tenant, by name. Tenants are few
	// (the customers of one deployment), so the list is not paginated.
	ListTenants(ctx context.Context) ([]Tenant, error)
	// TenantKnown says whether tenant is known.
	TenantKnown(ctx context.Context, tenant string) (bool, error)
}

// ValidateNewTenant checks a tenant name to be created.
func ValidateNewTenant(tenant string) error {
	if !ValidTenant(tenant) {
		return Errorf(EInvalid, "a tenant name is 1-63 characters of a-z, 0-9, '.', '_' or '-'")
	}
	return nil
}

// UnknownTenant is the error for a token asked for a tenant settle does not
// know: the stores' CreateToken return it, so that the console and the CLI
// refuse the same way and say what to do instead.
func UnknownTenant(tenant string) error {
	return Errorf(EInvalid, "settle knows no tenant “%s”: pick one from the list of tenants, "+
		"or create it first (Admin → New tenant, or settle tenant create %s)", PlainText(tenant, 63), PlainText(tenant, 63))
}

// TenantExists is the error for creating a tenant that is already known.
func TenantExists(tenant string) error {
	return Errorf(EConflict, "tenant “%s” already exists", PlainText(tenant, 63))
}
