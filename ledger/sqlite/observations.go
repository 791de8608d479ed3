package sqlite

import (
	"context"

	"settle/ledger"
	"settle/ledger/sqlite/internal/dbsqlc"
)

var _ ledger.ObservationStore = (*Store)(nil)

// ObservationInsert implements ledger.ObservationDriver, in one
// transaction on the writer.
func (d driver) ObservationInsert(ctx context.Context, rows []ledger.ObservationRow) error {
	return d.inTx(ctx, func(q *dbsqlc.Queries) error {
		for _, r := range rows {
			err := q.ObservationInsert(ctx, dbsqlc.ObservationInsertParams{TenantID: r.Tenant,
				OperationID: r.OperationID, Target: r.Target, FromState: string(r.From), ToState: string(r.To),
				At: micros(r.At), Refused: r.Refused})
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// ObservationDelete implements ledger.ObservationDriver in one statement
// on the single writer, which serialises drainers.
func (d driver) ObservationDelete(ctx context.Context, max int) ([]ledger.ObservationRow, error) {
	rows, err := d.w.ObservationDrain(ctx, int64(max))
	out := make([]ledger.ObservationRow, len(rows))
	for i, r := range rows {
		out[i] = ledger.ObservationRow{ID: r.ObservationID, Refused: r.Refused, Transition: ledger.Transition{
			Tenant: r.TenantID, OperationID: r.OperationID, Target: r.Target,
			From: ledger.State(r.FromState), To: ledger.State(r.ToState), At: fromMicros(r.At)}}
	}
	return out, err
}
