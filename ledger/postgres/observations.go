package postgres

import (
	"context"
	"time"

	"settle/ledger"
	"settle/ledger/postgres/internal/dbsqlc"
)

var _ ledger.ObservationStore = (*Store)(nil)

// ObservationInsert implements ledger.ObservationDriver in one statement,
// the rows unnested from arrays.
func (d driver) ObservationInsert(ctx context.Context, rows []ledger.ObservationRow) error {
	n := len(rows)
	p := dbsqlc.ObservationInsertParams{Tenants: make([]string, n), OperationIds: make([]string, n),
		Targets: make([]string, n), FromStates: make([]string, n), ToStates: make([]string, n), Ats: make([]time.Time, n)}
	for i, r := range rows {
		p.Tenants[i], p.OperationIds[i], p.Targets[i] = r.Tenant, r.OperationID, r.Target
		p.FromStates[i], p.ToStates[i], p.Ats[i] = string(r.From), string(r.To), r.At
	}
	return d.q.ObservationInsert(ctx, p)
}

// ObservationDelete implements ledger.ObservationDriver.
func (d driver) ObservationDelete(ctx context.Context, max int) ([]ledger.ObservationRow, error) {
	rows, err := d.q.ObservationDrain(ctx, int32(min(max, 1<<31-1)))
	out := make([]ledger.ObservationRow, len(rows))
	for i, r := range rows {
		out[i] = ledger.ObservationRow{ID: r.ObservationID, Refused: r.Refused, Transition: ledger.Transition{
			Tenant: r.TenantID, OperationID: r.OperationID, Target: r.Target,
			From: ledger.State(r.FromState), To: ledger.State(r.ToState), At: r.At.UTC()}}
	}
	return out, err
}
