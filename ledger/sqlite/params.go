package sqlite

import (
	"context"
	"encoding/json"

	"settle/ledger"
	"settle/ledger/sqlite/internal/dbsqlc"
)

var (
	_ ledger.TenantParamStore  = (*Store)(nil)
	_ ledger.TenantParamLister = (*Store)(nil)
)

// TenantParamList implements ledger.ParamDriver.
func (d driver) TenantParamList(ctx context.Context, tenant string) ([]ledger.TenantParam, error) {
	rows, err := d.r.TenantParamList(ctx, tenant)
	out := make([]ledger.TenantParam, len(rows))
	for i, r := range rows {
		out[i] = ledger.TenantParam{Name: r.Name, Value: r.Value, UpdatedAt: fromMicros(r.UpdatedAt)}
	}
	return out, err
}

// TenantParamLock implements ledger.ParamDriver: the transaction of WithTx
// began IMMEDIATE on the one writer, so nothing else changes the
// parameters until it ends.
func (d driver) TenantParamLock(context.Context, string) error { return nil }

// TenantParamPut implements ledger.ParamDriver.
func (d driver) TenantParamPut(ctx context.Context, tenant string, p ledger.TenantParam) error {
	return d.w.TenantParamPut(ctx, dbsqlc.TenantParamPutParams{TenantID: tenant, Name: p.Name, Value: p.Value,
		UpdatedAt: micros(p.UpdatedAt)})
}

// TenantParamDelete implements ledger.ParamDriver.
func (d driver) TenantParamDelete(ctx context.Context, tenant, name string) error {
	return d.w.TenantParamDelete(ctx, dbsqlc.TenantParamDeleteParams{TenantID: tenant, Name: name})
}

// OperationCountInStates implements ledger.ParamDriver.
func (d driver) OperationCountInStates(ctx context.Context, tenant string, states []ledger.State, limit int) (int, error) {
	names, err := json.Marshal(states)
	if err != nil {
		return 0, err
	}
	n, err := d.r.OperationCountInStates(ctx, dbsqlc.OperationCountInStatesParams{TenantID: tenant,
		States: string(names), MaxCount: int64(limit)})
	return int(n), err
}
