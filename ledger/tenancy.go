package ledger

import (
	"context"
	"fmt"
	"time"
)

// withAction builds the action of kind by the context's actor before
// anything is written (no actor: EInvalid, nothing written), then runs
// change and records the action in one transaction. change may fill in
// the action's object or reason.
func (l *Ledger) withAction(ctx context.Context, kind ActionKind, tenant, object string,
	change func(tx Driver, a *Action) error) error {
	a, err := NewAction(ctx, kind, tenant, object, "", "", l.clock())
	if err != nil {
		return err
	}
	return l.d.WithTx(ctx, func(tx Driver) error {
		if err := change(tx, &a); err != nil {
			return err
		}
		return tx.ActionInsert(ctx, a)
	})
}

// Actions implements ActionStore.
func (l *Ledger) Actions(ctx context.Context, f ActionFilter) ([]Action, error) {
	f, err := f.Validate()
	if err != nil {
		return nil, err
	}
	acts, err := l.d.ActionList(ctx, f.Tenant, f.OperationID, f.Limit)
	if err != nil {
		return nil, fmt.Errorf("actions: %w", err)
	}
	return acts, nil
}

// CreateTenant implements TenantStore.
func (l *Ledger) CreateTenant(ctx context.Context, tenant string, at time.Time) error {
	if err := ValidateNewTenant(tenant); err != nil {
		return err
	}
	err := l.withAction(ctx, ActionTenantCreate, tenant, tenant, func(tx Driver, _ *Action) error {
		inserted, err := tx.TenantInsert(ctx, tenant, at.UTC().Truncate(time.Microsecond))
		if err == nil && !inserted {
			return TenantExists(tenant)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("create tenant: %w", err)
	}
	return nil
}

// ListTenants implements TenantStore. The list is every tenant's by
// design (it is the administrators' list to pick from), so it has no
// tenant predicate.
func (l *Ledger) ListTenants(ctx context.Context) ([]Tenant, error) {
	ts, err := l.d.TenantList(ctx)
	if err != nil {
		return nil, fmt.Errorf("list tenants: %w", err)
	}
	return ts, nil
}

// TenantKnown implements TenantStore.
func (l *Ledger) TenantKnown(ctx context.Context, tenant string) (bool, error) {
	known, err := l.d.TenantKnown(ctx, tenant)
	if err != nil {
		return false, fmt.Errorf("tenant known: %w", err)
	}
	return known, nil
}

// CreateToken implements TokenStore: only for a known tenant, held
// against its erasure until the token is committed.
func (l *Ledger) CreateToken(ctx context.Context, t Token) error {
	if err := ValidateTokenName(t.Name); err != nil {
		return err
	}
	if err := t.Rate.Validate(); err != nil {
		return err
	}
	t.CreatedAt = t.CreatedAt.UTC().Truncate(time.Microsecond)
	err := l.withAction(ctx, ActionTokenCreate, t.Tenant, t.ID, func(tx Driver, _ *Action) error {
		known, err := tx.TenantKnownHeld(ctx, t.Tenant)
		if err != nil {
			return err
		}
		if !known {
			return UnknownTenant(t.Tenant)
		}
		return tx.TokenInsert(ctx, t)
	})
	if err != nil {
		return fmt.Errorf("create token: %w", err)
	}
	return nil
}

// TokenByHash implements TokenStore.
func (l *Ledger) TokenByHash(ctx context.Context, hash []byte) (Token, error) {
	t, found, err := l.d.TokenByHash(ctx, hash)
	switch {
	case err != nil:
		return Token{}, fmt.Errorf("token: %w", err)
	case !found:
		return Token{}, Errorf(ENotFound, "token not found")
	}
	return t, nil
}

// ListTokens implements TokenStore.
func (l *Ledger) ListTokens(ctx context.Context, tenant string) ([]Token, error) {
	ts, err := l.d.TokenList(ctx, tenant)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	return ts, nil
}

// RevokeToken implements TokenStore.
func (l *Ledger) RevokeToken(ctx context.Context, tenant, id string, at time.Time) error {
	if !ValidTokenID(id) {
		return Errorf(ENotFound, "token not found")
	}
	err := l.withAction(ctx, ActionTokenRevoke, tenant, id, func(tx Driver, _ *Action) error {
		found, err := tx.TokenRevoke(ctx, tenant, id, at.UTC().Truncate(time.Microsecond))
		if err == nil && !found {
			return Errorf(ENotFound, "token not found")
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("revoke token: %w", err)
	}
	return nil
}

// TouchToken implements TokenStore.
func (l *Ledger) TouchToken(ctx context.Context, tenant, id string, at time.Time) (bool, error) {
	at = at.UTC().Truncate(time.Microsecond)
	wrote, err := l.d.TokenTouch(ctx, TokenTouchParams{Tenant: tenant, ID: id, At: at, StaleBefore: at.Add(-TouchEvery)})
	if err != nil {
		return false, fmt.Errorf("touch token: %w", err)
	}
	return wrote, nil
}
