package ledger

import (
	"context"
	"fmt"
	"time"
)

// LiveStates are the states the database-wide gauges count: the ones an
// operator acts on. SUCCEEDED and FAILED_TERMINAL grow without bound and
// are counted by the transitions counter instead, so that the periodic
// gauge query reads only the partial indexes of the live states.
var LiveStates = []State{Prepared, InFlight, Unknown, Escalated}

// StateGauge is one group of live operations: a tenant's operations of
// one target in one state.
type StateGauge struct {
	Tenant, Target string
	State          State
	Count          int
	// Due counts the UNKNOWN ones whose next reconciliation is due at the
	// query's now: the reconciler's queue. Zero for other states.
	Due int
	// Overdue counts the UNKNOWN ones past their deadline at now: in the
	// escalation queue (AwaitsPerson) until the reconciler escalates them.
	// Zero for other states.
	Overdue int
	// Oldest is the earliest last change of the group: for ESCALATED, when
	// the oldest open escalation was escalated.
	Oldest time.Time
}

// QuarantineGauge counts a scope tenant's open (unresolved) quarantine
// items of one target; Tenant is "" for unattributed items.
type QuarantineGauge struct {
	Tenant, Target string
	Count          int
	// Known says the tenant has operations in the ledger. An unattributed
	// event's scope is the tenant it claims, unverified: only a known one
	// may become a metric label.
	Known bool
}

// Gauges is one reading of the database-wide gauges.
type Gauges struct {
	States     []StateGauge
	Quarantine []QuarantineGauge
}

// GaugeStore reads the database-wide gauges in one statement, for the
// metrics collector that runs it every few seconds (never per scrape).
type GaugeStore interface {
	// Gauges groups the live operations by tenant, target and state, and
	// the open quarantine by scope tenant and target; due is judged at now.
	Gauges(ctx context.Context, now time.Time) (Gauges, error)
}

// GaugeDriver is the SQL of the gauges.
type GaugeDriver interface {
	// GaugeRows groups, in one statement, the live operations by tenant,
	// target and state (Kind "op"; due and overdue judged at now) and the
	// open quarantine by scope tenant and target (Kind "quarantine";
	// State "known" when the scope tenant has operations).
	GaugeRows(ctx context.Context, now time.Time) ([]GaugeRow, error)
}

// GaugeRow is one group of GaugeDriver.GaugeRows.
type GaugeRow struct {
	Kind, Tenant, Target, State string
	Count, Due, Overdue         int
	Oldest                      time.Time
}

// Gauges implements GaugeStore.
func (l *Ledger) Gauges(ctx context.Context, now time.Time) (Gauges, error) {
	rows, err := l.d.GaugeRows(ctx, now.UTC().Truncate(time.Microsecond))
	if err != nil {
		return Gauges{}, fmt.Errorf("gauges: %w", err)
	}
	var g Gauges
	for _, r := range rows {
		if r.Kind == "quarantine" {
			g.Quarantine = append(g.Quarantine, QuarantineGauge{Tenant: r.Tenant, Target: r.Target, Count: r.Count,
				Known: r.State == "known"})
			continue
		}
		g.States = append(g.States, StateGauge{Tenant: r.Tenant, Target: r.Target, State: State(r.State),
			Count: r.Count, Due: r.Due, Overdue: r.Overdue, Oldest: r.Oldest})
	}
	return g, nil
}
