package sqlite

import (
	"context"
	"encoding/json"
	"time"

	"settle/ledger"
	"settle/ledger/sqlite/internal/dbsqlc"
)

// QuarantineList implements ledger.QuarantineDriver.
func (d driver) QuarantineList(ctx context.Context, p ledger.QuarantineListParams) ([]ledger.QuarantineItem, error) {
	tenants, err := json.Marshal(p.Tenants)
	if err != nil {
		return nil, err
	}
	var before any
	if p.Before != nil {
		before = micros(*p.Before)
	}
	lp := dbsqlc.QuarantineListParams{OpenOnly: p.OpenOnly, ResolvedOnly: p.ResolvedOnly,
		AllTenants: p.AllTenants, Tenants: string(tenants), Unattributed: p.Unattributed, AnyItem: p.AnyItem,
		AboutOperation: p.AboutOperation, AboutReference: p.AboutReference, AboutRemote: p.AboutRemote,
		Target: p.Target, Ref: p.Ref, OpPrefix: p.OpPrefix, Reason: p.Reason, Before: before, AfterID: p.AfterID,
		MaxRows: int64(p.Limit)}
	var rows []dbsqlc.QuarantineListRow
	if p.Ref == "" {
		rows, err = d.r.QuarantineList(ctx, lp)
	} else {
		// A search is driven by the items naming the reference (see the query).
		rows, err = d.quarantineSearch(ctx, lp)
	}
	if err != nil {
		return nil, err
	}
	items := make([]ledger.QuarantineItem, 0, len(rows))
	for _, r := range rows {
		items = append(items, quarantineItemOf(r))
	}
	return items, nil
}

// quarantineSearch is QuarantineList with a reference, by its own query.
func (d driver) quarantineSearch(ctx context.Context, p dbsqlc.QuarantineListParams) ([]dbsqlc.QuarantineListRow, error) {
	found, err := d.r.QuarantineSearch(ctx, dbsqlc.QuarantineSearchParams{Ref: p.Ref, OpPrefix: p.OpPrefix,
		OpenOnly: p.OpenOnly, ResolvedOnly: p.ResolvedOnly, AllTenants: p.AllTenants, Tenants: p.Tenants,
		Unattributed: p.Unattributed, AnyItem: p.AnyItem, AboutOperation: p.AboutOperation,
		AboutReference: p.AboutReference, AboutRemote: p.AboutRemote, Target: p.Target, Reason: p.Reason,
		Before: p.Before, AfterID: p.AfterID, MaxRows: p.MaxRows})
	rows := make([]dbsqlc.QuarantineListRow, 0, len(found))
	for _, r := range found {
		rows = append(rows, dbsqlc.QuarantineListRow(r))
	}
	return rows, err
}

// QuarantineIDBoundBefore implements ledger.QuarantineDriver.
func (d driver) QuarantineIDBoundBefore(ctx context.Context, before time.Time) (int64, error) {
	return d.r.QuarantineIDBoundBefore(ctx, micros(before))
}
