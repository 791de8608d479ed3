package sqlite

import (
	"context"
	"database/sql"
	"time"

	"settle/ledger"
	"settle/ledger/sqlite/internal/dbsqlc"
)

var (
	_ ledger.FigureStore  = (*Store)(nil)
	_ ledger.TenantLister = (*Store)(nil)
	_ ledger.RollupStore  = (*Store)(nil)
)

// FigureTransitions implements ledger.FigureDriver.
func (d driver) FigureTransitions(ctx context.Context, tenant string, w ledger.Window) ([]ledger.Transition, error) {
	rows, err := d.r.FigureTransitions(ctx, dbsqlc.FigureTransitionsParams{TenantID: tenant,
		Since: micros(w.Since), Until: micros(w.Until)})
	out := make([]ledger.Transition, len(rows))
	for i, r := range rows {
		out[i] = ledger.Transition{OperationID: r.OperationID, Target: r.Target, From: ledger.State(r.FromState),
			To: ledger.State(r.ToState), At: fromMicros(r.At)}
	}
	return out, err
}

// OperationTenants implements ledger.FigureDriver.
func (d driver) OperationTenants(ctx context.Context) ([]string, error) {
	return d.r.OperationTenants(ctx)
}

// FigureTargets implements ledger.FigureDriver.
func (d driver) FigureTargets(ctx context.Context, tenant, sinceDay, untilDay string) ([]string, error) {
	return d.r.FigureTargets(ctx, dbsqlc.FigureTargetsParams{TenantID: tenant, SinceDay: sinceDay, UntilDay: untilDay})
}

// FigureEpisodes implements ledger.FigureDriver.
func (d driver) FigureEpisodes(ctx context.Context, tenant string, w ledger.Window) ([]ledger.Episode, error) {
	rows, err := d.r.FigureEpisodes(ctx, dbsqlc.FigureEpisodesParams{TenantID: tenant,
		Since: micros(w.Since), Until: micros(w.Until)})
	out := make([]ledger.Episode, len(rows))
	for i, r := range rows {
		out[i] = ledger.Episode{Target: r.Target, Started: fromMicros(r.EnteredAt), Escalated: timePtr(r.EscalatedAt),
			Final: timePtr(r.FinalAt), FinalState: ledger.State(r.FinalState)}
	}
	return out, err
}

// FigureEscalations implements ledger.FigureDriver.
func (d driver) FigureEscalations(ctx context.Context, tenant string, w ledger.Window) ([]ledger.Escalation, error) {
	rows, err := d.r.FigureEscalations(ctx, dbsqlc.FigureEscalationsParams{TenantID: tenant,
		Since: micros(w.Since), Until: micros(w.Until)})
	out := make([]ledger.Escalation, len(rows))
	for i, r := range rows {
		out[i] = ledger.Escalation{Target: r.Target, At: fromMicros(r.At)}
	}
	return out, err
}

// timePtr is the time of a nullable microsecond column, or nil.
func timePtr(us sql.NullInt64) *time.Time {
	if !us.Valid {
		return nil
	}
	t := fromMicros(us.Int64)
	return &t
}
