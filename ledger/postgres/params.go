package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

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
	params, err := tenantParams(ctx, s.pool, tenant)
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
	rows, err := s.pool.Query(ctx, `SELECT name, value, updated_at FROM tenant_params
		WHERE tenant_id = $1 ORDER BY name`, tenant)
	if err != nil {
		return nil, fmt.Errorf("list tenant params: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.TenantParam, error) {
		var p ledger.TenantParam
		err := r.Scan(&p.Name, &p.Value, &p.UpdatedAt)
		utc(&p.UpdatedAt)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("list tenant params: %w", err)
	}
	return out, nil
}

// SetTenantParams implements ledger.TenantParamStore with
// ledger.SetTenantParamsIn, in one transaction.
func (s *Store) SetTenantParams(ctx context.Context, tenant string, set map[string]string, unset []string, force bool) error {
	if err := ledger.ValidateTenantParams(tenant, set, unset); err != nil {
		return err
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		return ledger.SetTenantParamsIn(ctx, paramsTx{tx}, tenant, set, unset, force, s.clock())
	})
	if err != nil {
		return fmt.Errorf("set tenant params: %w", err)
	}
	return nil
}

// tenantParams reads the tenant's parameters.
func tenantParams(ctx context.Context, q querier, tenant string) (map[string]string, error) {
	rows, err := q.Query(ctx, `SELECT name, value FROM tenant_params WHERE tenant_id = $1`, tenant)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	var name, value string
	_, err = pgx.ForEachRow(rows, []any{&name, &value}, func() error {
		out[name] = value
		return nil
	})
	return out, err
}

// paramsTx is ledger.TenantParamsTx over one pgx transaction: SQL only.
type paramsTx struct{ tx pgx.Tx }

var _ ledger.TenantParamsTx = paramsTx{}

// paramsLockSpace is the first key of the tenant-parameter advisory locks
// (the second is the tenant's hash): the two-key space is apart from the
// one-key locks that migrations take.
const paramsLockSpace = 0x5e771e

// LockTenantParams takes a transaction-scoped advisory lock on the tenant's
// parameters before reading them: FOR UPDATE would lock only rows that
// exist, and two first-time sets must not both pass the limit.
func (t paramsTx) LockTenantParams(ctx context.Context, tenant string) (map[string]string, error) {
	if _, err := t.tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, paramsLockSpace, tenant); err != nil {
		return nil, err
	}
	return tenantParams(ctx, t.tx, tenant)
}

func (t paramsTx) UnfinishedOperations(ctx context.Context, tenant string, limit int) (int, error) {
	var n int
	err := t.tx.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM operation_ledger
		WHERE tenant_id = $1 AND state = ANY($2::text[]) LIMIT $3) o`,
		tenant, unfinishedStates(), limit).Scan(&n)
	return n, err
}

func (t paramsTx) PutTenantParam(ctx context.Context, tenant, name, value string, at time.Time) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO tenant_params (tenant_id, name, value, updated_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (tenant_id, name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
		tenant, name, value, at)
	return err
}

func (t paramsTx) DeleteTenantParam(ctx context.Context, tenant, name string) error {
	_, err := t.tx.Exec(ctx, `DELETE FROM tenant_params WHERE tenant_id = $1 AND name = $2`, tenant, name)
	return err
}

func (t paramsTx) RecordAction(ctx context.Context, a ledger.Action) error {
	return recordAction(ctx, t.tx, a)
}

// unfinishedStates is ledger.UnfinishedStates as a text array parameter.
func unfinishedStates() []string {
	var out []string
	for _, s := range ledger.UnfinishedStates() {
		out = append(out, string(s))
	}
	return out
}
