package sqlite

import (
	"context"

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
		out[i] = ledger.Episode{Target: r.Target, Started: fromMicros(r.EnteredAt), Escalated: fromNull(r.EscalatedAt),
			Final: fromNull(r.FinalAt), FinalState: ledger.State(r.FinalState)}
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

// FigureRowsOf implements ledger.FigureDriver: six statements, each over
// every tenant of p.
func (d driver) FigureRowsOf(ctx context.Context, p ledger.FigureRowsParams) (ledger.FigureRows, error) {
	var out ledger.FigureRows
	since, until := micros(p.Since), micros(p.Until)
	targets, err := d.r.FigureTargetsOf(ctx, dbsqlc.FigureTargetsOfParams{Tenants: p.Tenants, SinceDay: p.SinceDay, UntilDay: p.UntilDay})
	if err != nil {
		return out, err
	}
	for _, r := range targets {
		out.Targets = append(out.Targets, ledger.TenantTarget{Tenant: r.TenantID, Target: r.Target})
	}
	episodes, err := d.r.FigureEpisodesOf(ctx, dbsqlc.FigureEpisodesOfParams{Tenants: p.Tenants, Since: since, Until: until})
	if err != nil {
		return out, err
	}
	for _, r := range episodes {
		out.Episodes = append(out.Episodes, ledger.TenantEpisode{Tenant: r.TenantID, Episode: ledger.Episode{Target: r.Target,
			Started: fromMicros(r.EnteredAt), Escalated: fromNull(r.EscalatedAt), Final: fromNull(r.FinalAt), FinalState: ledger.State(r.FinalState)}})
	}
	escalations, err := d.r.FigureEscalationsOf(ctx, dbsqlc.FigureEscalationsOfParams{Tenants: p.Tenants, Since: since, Until: until})
	if err != nil {
		return out, err
	}
	for _, r := range escalations {
		out.Escalations = append(out.Escalations, ledger.TenantEscalation{Tenant: r.TenantID, Escalation: ledger.Escalation{Target: r.Target, At: fromMicros(r.At)}})
	}
	conflicts, err := d.r.PayloadConflictCountsOf(ctx, dbsqlc.PayloadConflictCountsOfParams{Tenants: p.Tenants, Since: since, Until: until})
	if err != nil {
		return out, err
	}
	out.PayloadConflicts = make(map[string]int, len(conflicts))
	for _, r := range conflicts {
		out.PayloadConflicts[r.TenantID] = int(r.N)
	}
	findings, err := d.r.FindingCountsOf(ctx, dbsqlc.FindingCountsOfParams{Tenants: p.Tenants, Since: since, Until: until, Kind: string(p.Finding)})
	if err != nil {
		return out, err
	}
	out.Findings = make(map[string]int, len(findings))
	for _, r := range findings {
		out.Findings[r.TenantID] = int(r.N)
	}
	open, err := d.r.EscalatedCountsOf(ctx, p.Tenants)
	if err != nil {
		return out, err
	}
	for _, r := range open {
		out.Open = append(out.Open, ledger.OpenEscalations{Tenant: r.TenantID, Target: r.Target, Count: int(r.N), Oldest: fromMicros(r.Oldest)})
	}
	return out, nil
}
