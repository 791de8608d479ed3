package ledger

import (
	"context"
	"slices"
	"sort"
	"time"
)

// Transition is one state change of a tenant's operation, as the manager
// figures and an Observer need it. Tenant is empty in a tenant's figures.
type Transition struct {
	Tenant      string
	OperationID string
	Target      string
	From, To    State
	At          time.Time
}

// FigureStore reads what the per-tenant manager figures are computed from.
type FigureStore interface {
	// Transitions returns the tenant's transitions into UNKNOWN, SUCCEEDED,
	// FAILED_TERMINAL and ESCALATED in the window, oldest first.
	Transitions(ctx context.Context, tenant string, w Window) ([]Transition, error)
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
	Since, Until     time.Time       // the window, Until exclusive
	Targets          []TargetFigures // sorted by target
	OpenEscalations  int             // operations ESCALATED now
	OldestEscalation *time.Time      // when the oldest of them was escalated
	PayloadConflicts int             // same intent, different payload: refused
	Duplicates       int             // duplicates found by audit
}

// ComputeFigures turns a tenant's transitions in the window w into
// per-target figures.
func ComputeFigures(tenant string, w Window, ts []Transition) TenantFigures {
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
	return finishFigures(tenant, w, byTarget, durations)
}

// finishFigures sorts the targets and computes each one's median and
// worst: one copy for the raw computation and the rollups.
func finishFigures(tenant string, w Window, byTarget map[string]*TargetFigures, durations map[string][]time.Duration) TenantFigures {
	out := TenantFigures{Tenant: tenant, Since: w.Since, Until: w.Until}
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

// Episode is one entry of an operation into UNKNOWN, with the moment it
// was resolved (SUCCEEDED, FAILED_TERMINAL or ESCALATED), nil while open.
type Episode struct {
	Target   string
	Entered  time.Time
	Resolved *time.Time
}

// Rollup is what the daily rollups hold for a tenant over whole UTC days:
// the targets with any transition counted by the figures, the UNKNOWN
// episodes that began in the window, and the escalations per target.
type Rollup struct {
	Targets     []string
	Episodes    []Episode
	Escalations map[string]int
}

// RollupStore reads the figure rollups that the stores keep with every
// transition (migration 00018), so that the figures cost a few rows of
// rare states instead of the tenant's whole event log.
type RollupStore interface {
	// FigureRollup returns the tenant's rollup for a window of whole UTC
	// days (Window.WholeDays); EInvalid for any other window, which only
	// the raw log answers. Episodes may be resolved after the window.
	FigureRollup(ctx context.Context, tenant string, w Window) (Rollup, error)
}

// IsMidnightUTC reports whether t starts a UTC day: the rollups answer
// only windows of whole days.
func IsMidnightUTC(t time.Time) bool { return t.Equal(t.UTC().Truncate(24 * time.Hour)) }

// ComputeRollup turns a rollup into the figures ComputeFigures computes
// from the same history's transitions: the same numbers, exactly (a store
// test compares them on randomized histories). Episodes that began before
// the window are not in it, as ComputeFigures ignores a resolution whose
// entry it did not see; a resolution after the window's end is not
// counted, as ComputeFigures never sees it.
func ComputeRollup(tenant string, w Window, r Rollup) TenantFigures {
	byTarget := map[string]*TargetFigures{}
	get := func(name string) *TargetFigures {
		f := byTarget[name]
		if f == nil {
			f = &TargetFigures{Target: name, UnknownPerDay: map[string]int{}}
			byTarget[name] = f
		}
		return f
	}
	for _, name := range r.Targets {
		get(name)
	}
	durations := map[string][]time.Duration{}
	for _, e := range r.Episodes {
		get(e.Target).UnknownPerDay[e.Entered.UTC().Format(time.DateOnly)]++
		if e.Resolved != nil && e.Resolved.Before(w.Until) {
			durations[e.Target] = append(durations[e.Target], e.Resolved.Sub(e.Entered))
		}
	}
	for name, n := range r.Escalations {
		get(name).Escalated = n
	}
	return finishFigures(tenant, w, byTarget, durations)
}

// TenantLister lists every tenant that has operations, sorted, for the
// figures overview of a manager bound to all tenants.
type TenantLister interface {
	Tenants(ctx context.Context) ([]string, error)
}

// WindowStart is the first moment of a window of whole UTC days ending
// with now's day: the console's 7, 30 and 90 days and `settle figures
// --days`, which the rollups answer exactly.
func WindowStart(now time.Time, days int) time.Time {
	return now.UTC().Truncate(24*time.Hour).AddDate(0, 0, 1-days)
}
