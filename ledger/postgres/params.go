package postgres

import (
	"context"

	"settle/ledger"
	"settle/ledger/postgres/internal/dbsqlc"
)

var (
	_ ledger.TenantParamStore  = (*Store)(nil)
	_ ledger.TenantParamLister = (*Store)(nil)
)

// TenantParamList implements ledger.ParamDriver.
func (d driver) TenantParamList(ctx context.Context, tenant string) ([]ledger.TenantParam, error) {
	rows, err := d.q.TenantParamList(ctx, tenant)
	out := make([]ledger.TenantParam, len(rows))
	for i, r := range rows {
		out[i] = ledger.TenantParam{Name: r.Name, Value: r.Value, UpdatedAt: r.UpdatedAt.UTC()}
	}
	return out, err
}

// TenantParamLock implements ledger.ParamDriver with a transaction-scoped
// advisory lock: FOR UPDATE would lock only the rows that exist, and two
// first-time sets must not both pass the limit.
func (d driver) TenantParamLock(ctx context.Context, tenant string) error {
	return d.q.TenantParamLock(ctx, tenant)
}

// TenantParamPut implements ledger.ParamDriver.
func (d driver) TenantParamPut(ctx context.Context, tenant string, p ledger.TenantParam) error {
	return d.q.TenantParamPut(ctx, dbsqlc.TenantParamPutParams{TenantID: tenant, Name: p.Name, Value: p.Value,
		UpdatedAt: p.UpdatedAt})
}

// TenantParamDelete implements ledger.ParamDriver.
func (d driver) TenantParamDelete(ctx context.Context, tenant, name string) error {
	return d.q.TenantParamDelete(ctx, dbsqlc.TenantParamDeleteParams{TenantID: tenant, Name: name})
}

// OperationCountInStates implements ledger.ParamDriver.
func (d driver) OperationCountInStates(ctx context.Context, tenant string, states []ledger.State, limit int) (int, error) {
	n, err := d.q.OperationCountInStates(ctx, dbsqlc.OperationCountInStatesParams{TenantID: tenant,
		States: stateNames(states), MaxCount: int32(min(limit, 1<<31-1))})
	return int(n), err
}

// stateNames is states as a text array parameter.
func stateNames(states []ledger.State) []string {
	out := make([]string, len(states))
	for i, s := range states {
		out[i] = string(s)
	}
	return out
}
