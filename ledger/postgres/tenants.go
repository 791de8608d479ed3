package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"settle/ledger"
)

var _ ledger.TenantStore = (*Store)(nil)

// CreateTenant implements ledger.TenantStore.
func (s *Store) CreateTenant(ctx context.Context, tenant string, at time.Time) error {
	if err := ledger.ValidateNewTenant(tenant); err != nil {
		return err
	}
	err := s.withAction(ctx, ledger.ActionTenantCreate, tenant, tenant, func(tx pgx.Tx, _ *ledger.Action) error {
		tag, err := tx.Exec(ctx, `INSERT INTO tenants (tenant_id, created_at) VALUES ($1, $2)
			ON CONFLICT (tenant_id) DO NOTHING`, tenant, at.UTC().Truncate(time.Microsecond))
		if err == nil && tag.RowsAffected() == 0 {
			return ledger.TenantExists(tenant)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("create tenant: %w", err)
	}
	return nil
}

// ListTenants implements ledger.TenantStore. The list is every tenant's by
// design (it is the administrators' list to pick from), so it has no
// tenant predicate.
func (s *Store) ListTenants(ctx context.Context) ([]ledger.Tenant, error) {
	rows, err := s.pool.Query(ctx, `SELECT tenant_id, created_at FROM tenants ORDER BY tenant_id`)
	if err != nil {
		return nil, fmt.Errorf("list tenants: %w", err)
	}
	ts, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ledger.Tenant, error) {
		var t ledger.Tenant
		err := row.Scan(&t.ID, &t.CreatedAt)
		t.CreatedAt = t.CreatedAt.UTC()
		return t, err
	})
	if err != nil {
		return nil, fmt.Errorf("list tenants: %w", err)
	}
	return ts, nil
}

// TenantKnown implements ledger.TenantStore.
func (s *Store) TenantKnown(ctx context.Context, tenant string) (bool, error) {
	var known bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM tenants WHERE tenant_id = $1)`, tenant).Scan(&known)
	if err != nil {
		return false, fmt.Errorf("tenant known: %w", err)
	}
	return known, nil
}
