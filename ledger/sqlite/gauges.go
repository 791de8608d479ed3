package sqlite

import (
	"context"
	"time"

	"settle/ledger"
)

var _ ledger.GaugeStore = (*Store)(nil)

// GaugeRows implements ledger.GaugeDriver.
func (d driver) GaugeRows(ctx context.Context, now time.Time) ([]ledger.GaugeRow, error) {
	rows, err := d.r.GaugeRows(ctx, micros(now))
	out := make([]ledger.GaugeRow, len(rows))
	for i, r := range rows {
		out[i] = ledger.GaugeRow{Kind: r.Kind, Tenant: r.TenantID, Target: r.Target, State: r.State,
			Count: int(r.N), Due: int(r.Due), Overdue: int(r.Overdue), Oldest: fromMicros(r.Oldest)}
	}
	return out, err
}
