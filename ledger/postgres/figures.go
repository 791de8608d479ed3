package postgres

import (
	"context"
	"time"

	"settle/ledger"
	"settle/ledger/postgres/internal/dbsqlc"
)

var (
	_ ledger.FigureStore  = (*Store)(nil)
	_ ledger.TenantLister = (*Store)(nil)
	_ ledger.RollupStore  = (*Store)(nil)
)

// FigureTransitions implements ledger.FigureDriver.
func (d driver) FigureTransitions(ctx context.Context, tenant string, w ledger.Window) ([]ledger.Transition, error) {
	rows, err := d.q.FigureTransitions(ctx, dbsqlc.FigureTransitionsParams{TenantID: tenant, Since: w.Since, Until: w.Until})
	out := make([]ledger.Transition, len(rows))
	for i, r := range rows {
		out[i] = ledger.Transition{OperationID: r.OperationID, Target: r.Target, From: ledger.State(r.FromState),
			To: ledger.State(r.ToState), At: r.At.UTC()}
	}
	return out, err
}

// OperationTenants implements ledger.FigureDriver.
func (d driver) OperationTenants(ctx context.Context) ([]string, error) {
	return d.q.OperationTenants(ctx)
}

// FigureTargets implements ledger.FigureDriver.
func (d driver) FigureTargets(ctx context.Context, tenant, sinceDay, untilDay string) ([]string, error) {
	return d.q.FigureTargets(ctx, dbsqlc.FigureTargetsParams{TenantID: tenant, SinceDay: sinceDay, UntilDay: untilDay})
}

// FigureEpisodes implements ledger.FigureDriver.
func (d driver) FigureEpisodes(ctx context.Context, tenant string, w ledger.Window) ([]ledger.Episode, error) {
	rows, err := d.q.FigureEpisodes(ctx, dbsqlc.FigureEpisodesParams{TenantID: tenant, Since: w.Since, Until: w.Until})
	out := make([]ledger.Episode, len(rows))
	for i, r := range rows {
		out[i] = ledger.Episode{Target: r.Target, Started: r.EnteredAt.UTC(), Escalated: utcOrNil(r.EscalatedAt),
			Final: utcOrNil(r.FinalAt), FinalState: ledger.State(r.FinalState)}
	}
	return out, err
}

// FigureEscalations implements ledger.FigureDriver.
func (d driver) FigureEscalations(ctx context.Context, tenant string, w ledger.Window) ([]ledger.Escalation, error) {
	rows, err := d.q.FigureEscalations(ctx, dbsqlc.FigureEscalationsParams{TenantID: tenant, Since: w.Since, Until: w.Until})
	out := make([]ledger.Escalation, len(rows))
	for i, r := range rows {
		out[i] = ledger.Escalation{Target: r.Target, At: r.At.UTC()}
	}
	return out, err
}

// utcOrNil is t in UTC, or nil.
func utcOrNil(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// FigureRowsOf implements ledger.FigureDriver: six statements, each over
// every tenant of p.
func (d driver) FigureRowsOf(ctx context.Context, p ledger.FigureRowsParams) (ledger.FigureRows, error) {
	var out ledger.FigureRows
	targets, err := d.q.FigureTargetsOf(ctx, dbsqlc.FigureTargetsOfParams{Tenants: p.Tenants, SinceDay: p.SinceDay, UntilDay: p.UntilDay})
	if err != nil {
		return out, err
	}
	for _, r := range targets {
		out.Targets = append(out.Targets, ledger.TenantTarget{Tenant: r.TenantID, Target: r.Target})
	}
	episodes, err := d.q.FigureEpisodesOf(ctx, dbsqlc.FigureEpisodesOfParams{Tenants: p.Tenants, Since: p.Since, Until: p.Until})
	if err != nil {
		return out, err
	}
	for _, r := range episodes {
		out.Episodes = append(out.Episodes, ledger.TenantEpisode{Tenant: r.TenantID, Episode: ledger.Episode{Target: r.Target,
			Started: r.EnteredAt.UTC(), Escalated: utcOrNil(r.EscalatedAt), Final: utcOrNil(r.FinalAt), FinalState: ledger.State(r.FinalState)}})
	}
	escalations, err := d.q.FigureEscalationsOf(ctx, dbsqlc.FigureEscalationsOfParams{Tenants: p.Tenants, Since: p.Since, Until: p.Until})
	if err != nil {
		return out, err
	}
	for _, r := range escalations {
		out.Escalations = append(out.Escalations, ledger.TenantEscalation{Tenant: r.TenantID, Escalation: ledger.Escalation{Target: r.Target, At: r.At.UTC()}})
	}
	conflicts, err := d.q.PayloadConflictCountsOf(ctx, dbsqlc.PayloadConflictCountsOfParams{Tenants: p.Tenants, Since: p.Since, Until: p.Until})
	if err != nil {
		return out, err
	}
	out.PayloadConflicts = make(map[string]int, len(conflicts))
	for _, r := range conflicts {
		out.PayloadConflicts[r.TenantID] = int(r.N)
	}
	findings, err := d.q.FindingCountsOf(ctx, dbsqlc.FindingCountsOfParams{Tenants: p.Tenants, Since: p.Since, Until: p.Until, Kind: string(p.Finding)})
	if err != nil {
		return out, err
	}
	out.Findings = make(map[string]int, len(findings))
	for _, r := range findings {
		out.Findings[r.TenantID] = int(r.N)
	}
	open, err := d.q.EscalatedCountsOf(ctx, p.Tenants)
	if err != nil {
		return out, err
	}
	for _, r := range open {
		out.Open = append(out.Open, ledger.OpenEscalations{Tenant: r.TenantID, Target: r.Target, Count: int(r.N), Oldest: r.Oldest.UTC()})
	}
	return out, nil
}
