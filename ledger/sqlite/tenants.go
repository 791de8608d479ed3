package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"settle/ledger"
)

var _ ledger.TenantStore = (*Store)(nil)

// CreateTenant implements ledger.TenantStore.
func (s *Store) CreateTenant(ctx context.Context, tenant string, at time.Time) error {
	if err := ledger.ValidateNewTenant(tenant); err != nil {
		return err
	}
	err := s.withAction(ctx, ledger.ActionTenantCreate, tenant, tenant, func(tx *sql.Tx, _ *ledger.Action) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO tenants (tenant_id, created_at) VALUES (?, ?)
			ON CONFLICT (tenant_id) DO NOTHING`, tenant, micros(at))
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ledger.TenantExists(tenant)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("create tenant: %w", err)
	}
	return nil
}

// ListTenants implements ledger.TenantStore. The list is every tenant's by
// design (the administrators' list to pick from): no tenant predicate.
func (s *Store) ListTenants(ctx context.Context) ([]ledger.Tenant, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT tenant_id, created_at FROM tenants ORDER BY tenant_id`)
	if err != nil {
		return nil, fmt.Errorf("list tenants: %w", err)
	}
	defer rows.Close()
	var ts []ledger.Tenant
	for rows.Next() {
		var (
			t       ledger.Tenant
			created int64
		)
		if err := rows.Scan(&t.ID, &created); err != nil {
			return nil, fmt.Errorf("list tenants: %w", err)
		}
		t.CreatedAt = fromMicros(created)
		ts = append(ts, t)
	}
	return ts, rows.Err()
}

// TenantKnown implements ledger.TenantStore.
func (s *Store) TenantKnown(ctx context.Context, tenant string) (bool, error) {
	var known bool
	err := s.r.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM tenants WHERE tenant_id = ?)`, tenant).Scan(&known)
	if err != nil {
		return false, fmt.Errorf("tenant known: %w", err)
	}
	return known, nil
}
