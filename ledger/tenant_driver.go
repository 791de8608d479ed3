package ledger

import (
	"context"
	"time"
)

// TenantDriver is the SQL of tenants and their API tokens.
type TenantDriver interface {
	// TenantInsert inserts the tenant unless it exists; inserted is false
	// when it did.
	TenantInsert(ctx context.Context, tenant string, at time.Time) (inserted bool, err error)
	TenantList(ctx context.Context) ([]Tenant, error)
	TenantKnown(ctx context.Context, tenant string) (bool, error)
	// TenantKnownHeld is TenantKnown holding the tenant, until the
	// transaction ends, against an erasure deleting it.
	TenantKnownHeld(ctx context.Context, tenant string) (bool, error)

	TokenInsert(ctx context.Context, t Token) error
	// TokenByHash returns the token with that hash; found is false when
	// none has it.
	TokenByHash(ctx context.Context, hash []byte) (t Token, found bool, err error)
	// TokenList returns the tenant's tokens, newest first.
	TokenList(ctx context.Context, tenant string) ([]Token, error)
	// TokenRevoke sets the token's revocation time unless it has one and
	// reports whether the tenant has the token.
	TokenRevoke(ctx context.Context, tenant, id string, at time.Time) (found bool, err error)
	// TokenTouch sets the token's last use to p.At unless it is after
	// p.StaleBefore, and reports whether it wrote.
	TokenTouch(ctx context.Context, p TokenTouchParams) (bool, error)
}

// TokenTouchParams are TokenTouch's.
type TokenTouchParams struct {
	Tenant, ID      string
	At, StaleBefore time.Time
}

// ActionDriver is the SQL of the record of human actions.
type ActionDriver interface {
	ActionInsert(ctx context.Context, a Action) error
	// ActionList returns the tenant's actions (of one operation when
	// operationID is not empty), newest first, at most max.
	ActionList(ctx context.Context, tenant, operationID string, max int) ([]Action, error)
}
