package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"settle/ledger"
)

var (
	_ ledger.TenantParamStore  = (*Store)(nil)
	_ ledger.TenantParamLister = (*Store)(nil)
)

// TenantParams implements ledger.TenantParamStore.
func (s *Store) TenantParams(ctx context.Context, tenant string) (map[string]string, error) {
	if !ledger.ValidTenant(tenant) {
		return nil, ledger.Errorf(ledger.EInvalid, "tenant must be 1-63 characters of a-z, 0-9, '.', '_' or '-'")
	}
	params, err := tenantParams(ctx, s.r, tenant)
	if err != nil {
		return nil, fmt.Errorf("tenant params: %w", err)
	}
	return params, nil
}

// ListTenantParams implements ledger.TenantParamLister.
func (s *Store) ListTenantParams(ctx context.Context, tenant string) ([]ledger.TenantParam, error) {
	if !ledger.ValidTenant(tenant) {
		return nil, ledger.Errorf(ledger.EInvalid, "tenant must be 1-63 characters of a-z, 0-9, '.', '_' or '-'")
	}
	rows, err := s.r.QueryContext(ctx, `SELECT name, value, updated_at FROM tenant_params
		WHERE tenant_id = ? ORDER BY name`, tenant)
	if err != nil {
		return nil, fmt.Errorf("list tenant params: %w", err)
	}
	defer rows.Close()
	out := []ledger.TenantParam{}
	for rows.Next() {
		var (
			p  ledger.TenantParam
			at int64
		)
		if err := rows.Scan(&p.Name, &p.Value, &at); err != nil {
			return nil, fmt.Errorf("list tenant params: %w", err)
		}
		p.UpdatedAt = fromMicros(at)
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list tenant params: %w", err)
	}
	return out, nil
}

// SetTenantParams implements ledger.TenantParamStore with
// ledger.SetTenantParamsIn, in one IMMEDIATE transaction: the single
// writer is the lock LockTenantParams promises.
func (s *Store) SetTenantParams(ctx context.Context, tenant string, set map[string]string, unset []string, force bool) error {
	if err := ledger.ValidateTenantParams(tenant, set, unset); err != nil {
		return err
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		return ledger.SetTenantParamsIn(ctx, paramsTx{tx}, tenant, set, unset, force, s.clock())
	})
	if err != nil {
		return fmt.Errorf("set tenant params: %w", err)
	}
	return nil
}

func tenantParams(ctx context.Context, q querier, tenant string) (map[string]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT name, value FROM tenant_params WHERE tenant_id = ?`, tenant)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return nil, err
		}
		out[name] = value
	}
	return out, rows.Err()
}

// paramsTx is ledger.TenantParamsTx over one SQLite transaction: SQL only.
type paramsTx struct{ tx *sql.Tx }

var _ ledger.TenantParamsTx = paramsTx{}

// LockTenantParams reads the parameters: the transaction began IMMEDIATE
// on the one writer, so nothing else changes them until it ends.
func (t paramsTx) LockTenantParams(ctx context.Context, tenant string) (map[string]string, error) {
	return tenantParams(ctx, t.tx, tenant)
}

func (t paramsTx) UnfinishedOperations(ctx context.Context, tenant string, limit int) (int, error) {
	states := ledger.UnfinishedStates()
	args := []any{tenant}
	for _, s := range states {
		args = append(args, string(s))
	}
	args = append(args, limit)
	var n int
	err := t.tx.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM operation_ledger
		WHERE tenant_id = ? AND state IN (?`+strings.Repeat(", ?", len(states)-1)+`) LIMIT ?)`, args...).Scan(&n)
	return n, err
}

func (t paramsTx) PutTenantParam(ctx context.Context, tenant, name, value string, at time.Time) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO tenant_params (tenant_id, name, value, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (tenant_id, name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
		tenant, name, value, micros(at))
	return err
}

func (t paramsTx) DeleteTenantParam(ctx context.Context, tenant, name string) error {
	_, err := t.tx.ExecContext(ctx, `DELETE FROM tenant_params WHERE tenant_id = ? AND name = ?`, tenant, name)
	return err
}

func (t paramsTx) RecordAction(ctx context.Context, a ledger.Action) error {
	return recordAction(ctx, t.tx, a)
}
