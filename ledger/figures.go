package ledger

import (
	"context"
	"slices"
	"sort"
	"time"
)

// Transition is one state change of a tenant's operation, as the manager
// figures need it.
type Transition struct {
	OperationID string
	Target      string
	From, To    State
	At          time.Time
}

// FigureStore reads what the per-tenant manager figures are computed from.
type FigureStore interface {
	// Transitions returns the tenant's transitions into UNKNOWN, SUCCEEDED,
	// FAILED_TERMINAL and ESCALATED since t, oldest first.
	Transitions(ctx context.Context, tenant string, since time.Time) ([]Transition, error)
}

// TargetFigures are the paper's "what to measure" figures for one tenant
// and target over a window.
type TargetFigures struct {
	Target string
	// UnknownPerDay counts operations entering UNKNOWN, by UTC day
	// ("2006-01-02"), only days with entries.
	UnknownPerDay map[string]int
	// Resolved counts UNKNOWN episodes that ended (SUCCEEDED,
	// FAILED_TERMINAL or ESCALATED) in the window; Median and Worst are
	// their times from entering UNKNOWN to that end.
	Resolved      int
	Median, Worst time.Duration
	// Escalated counts operations escalated in the window.
	Escalated int
}

// TenantFigures are a tenant's figures, per target, with the tenant-wide
// counts that have no target.
type TenantFigures struct {
	Tenant           string
	Since            time.Time
	Targets          []TargetFigures // sorted by target
	OpenEscalations  int             // operations ESCALATED now
	OldestEscalation *time.Time      // when the oldest of them was escalated
	PayloadConflicts int             // same intent, different payload: refused
	Duplicates       int             // duplicates found by audit
}

// ComputeFigures turns a tenant's transitions into per-target figures.
func ComputeFigures(tenant string, since time.Time, ts []Transition) TenantFigures {
	byTarget := map[string]*TargetFigures{}
	entered := map[string]time.Time{} // operation → when its UNKNOWN episode began
	durations := map[string][]time.Duration{}
	for _, t := range ts {
		f := byTarget[t.Target]
		if f == nil {
			f = &TargetFigures{Target: t.Target, UnknownPerDay: map[string]int{}}
			byTarget[t.Target] = f
		}
		switch {
		case t.To == Unknown && t.From != Unknown:
			f.UnknownPerDay[t.At.UTC().Format(time.DateOnly)]++
			entered[t.OperationID] = t.At
		case t.To == Succeeded || t.To == FailedTerminal || t.To == Escalated:
			if t.To == Escalated {
				f.Escalated++
			}
			if start, ok := entered[t.OperationID]; ok {
				durations[t.Target] = append(durations[t.Target], t.At.Sub(start))
				delete(entered, t.OperationID)
			}
		}
	}
	out := TenantFigures{Tenant: tenant, Since: since}
	for name, f := range byTarget {
		d := durations[name]
		slices.Sort(d)
		if n := len(d); n > 0 {
			f.Resolved, f.Worst = n, d[n-1]
			f.Median = d[n/2]
			if n%2 == 0 {
				f.Median = (d[n/2-1] + d[n/2]) / 2
			}
		}
		out.Targets = append(out.Targets, *f)
	}
	sort.Slice(out.Targets, func(i, j int) bool { return out.Targets[i].Target < out.Targets[j].Target })
	return out
}

// TenantLister lists every tenant that has operations, sorted, for the
// figures overview of a manager bound to all tenants.
type TenantLister interface {
	Tenants(ctx context.Context) ([]string, error)
}
