package postgres

import (
	"context"
	"time"

	"settle/ledger"
	"settle/ledger/postgres/internal/dbsqlc"
)

// QuarantineList implements ledger.QuarantineDriver.
func (d driver) QuarantineList(ctx context.Context, p ledger.QuarantineListParams) ([]ledger.QuarantineItem, error) {
	rows, err := d.q.QuarantineList(ctx, dbsqlc.QuarantineListParams{OpenOnly: p.OpenOnly, ResolvedOnly: p.ResolvedOnly,
		AllTenants: p.AllTenants, Tenants: p.Tenants, Unattributed: p.Unattributed, AnyItem: p.AnyItem,
		AboutOperation: p.AboutOperation, AboutReference: p.AboutReference, AboutRemote: p.AboutRemote,
		Target: p.Target, Ref: p.Ref, OpPrefix: p.OpPrefix, Reason: p.Reason, Before: p.Before, AfterID: p.AfterID,
		MaxRows: int32(p.Limit)})
	if err != nil {
		return nil, err
	}
	items := make([]ledger.QuarantineItem, 0, len(rows))
	for _, r := range rows {
		items = append(items, quarantineItemOf(r))
	}
	return items, nil
}

// QuarantineIDBoundBefore implements ledger.QuarantineDriver.
func (d driver) QuarantineIDBoundBefore(ctx context.Context, before time.Time) (int64, error) {
	return d.q.QuarantineIDBoundBefore(ctx, before)
}
