package ledger

import (
	"context"
	"fmt"
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

// Measure counts finished episodes with the median and worst of one of
// their durations; both are zero when Count is zero.
type Measure struct {
	Count         int
	Median, Worst time.Duration
}

// An episode is an operation's stay outside a known outcome: it starts at
// the first entry into UNKNOWN or ESCALATED from another state (an
// operation escalated straight from IN_FLIGHT, unsent or mismatched, starts
// one too) and ends at the final state (SUCCEEDED or FAILED_TERMINAL).
// Moves between UNKNOWN and ESCALATED (an escalation, an approved same-key
// replay, a new escalation after it) stay within the episode. An episode
// that went through ESCALATED was resolved by people; one that did not was
// resolved automatically. This is the one definition: ComputeFigures reads
// it from the log, the stores' rollups keep it (migration 00030), and
// ComputeRollup gives the same numbers.

// TargetFigures are the paper's "what to measure" figures for one tenant
// and target over a window. Only episodes that started in the window
// count, and only what happened to them before its end.
type TargetFigures struct {
	Target string
	// StartedPerDay counts episodes started, by UTC day ("2006-01-02"),
	// only days with entries.
	StartedPerDay map[string]int
	// Automatic: episodes that reached a final state without ESCALATED;
	// times from the episode's start to the final state.
	Automatic Measure
	// ByPeople: episodes that went through ESCALATED and reached a final
	// state after an approved resolution (directly or after a replay);
	// times from the episode's start to the final state.
	ByPeople Measure
	// Escalation: the same episodes as ByPeople, times from their first
	// entry into ESCALATED to the final state (how long people took).
	Escalation Measure
	// FinalPerDay: the episodes of Automatic and ByPeople by the UTC day
	// they reached the final state, times from start to final state.
	FinalPerDay map[string]Measure
	// Escalated counts entries into ESCALATED in the window (an operation
	// escalated again after a replay counts twice); EscalatedPerDay by
	// UTC day, only days with entries.
	Escalated       int
	EscalatedPerDay map[string]int
	// OpenEscalations counts the target's operations ESCALATED now, and
	// OldestEscalation is when the oldest of them was escalated (nil when
	// none): filled by Figures, not by the window.
	OpenEscalations  int
	OldestEscalation *time.Time
}

// Resolved is the count of episodes that reached a final state.
func (t TargetFigures) Resolved() int { return t.Automatic.Count + t.ByPeople.Count }

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

// Episode is one episode of an operation (see Measure): when it started,
// when it first entered ESCALATED (nil if it has not), and when it reached
// its final state, which (nil and "" while open).
type Episode struct {
	Target     string
	Started    time.Time
	Escalated  *time.Time
	Final      *time.Time
	FinalState State
}

// ComputeFigures turns a tenant's transitions in the window w, in the
// order of the log, into per-target figures.
func ComputeFigures(tenant string, w Window, ts []Transition) TenantFigures {
	c := newFigureCounts()
	open := map[string]*Episode{} // operation → its open episode
	var episodes []*Episode
	for _, t := range ts {
		f := c.get(t.Target)
		if t.To == Escalated {
			f.Escalated++
			f.EscalatedPerDay[day(t.At)]++
		}
		e := open[t.OperationID]
		switch {
		case (t.To == Unknown || t.To == Escalated) && t.From != Unknown && t.From != Escalated:
			e = &Episode{Target: t.Target, Started: t.At}
			if t.To == Escalated {
				e.Escalated = &t.At
			}
			open[t.OperationID] = e
			episodes = append(episodes, e)
		case e == nil:
		case t.To == Escalated && e.Escalated == nil:
			e.Escalated = &t.At
		case t.To.Final():
			e.Final, e.FinalState = &t.At, t.To
			delete(open, t.OperationID)
		}
	}
	for _, e := range episodes {
		c.episode(*e)
	}
	return c.finish(tenant, w)
}

func day(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// figureCounts gathers the figures of both computations, so that the raw
// log and the rollups share every step after reading episodes.
type figureCounts struct {
	byTarget                 map[string]*TargetFigures
	auto, people, escalation map[string][]time.Duration
	final                    map[string]map[string][]time.Duration // target → day
}

func newFigureCounts() *figureCounts {
	return &figureCounts{byTarget: map[string]*TargetFigures{}, auto: map[string][]time.Duration{},
		people: map[string][]time.Duration{}, escalation: map[string][]time.Duration{},
		final: map[string]map[string][]time.Duration{}}
}

func (c *figureCounts) get(name string) *TargetFigures {
	f := c.byTarget[name]
	if f == nil {
		f = &TargetFigures{Target: name, StartedPerDay: map[string]int{}, FinalPerDay: map[string]Measure{},
			EscalatedPerDay: map[string]int{}}
		c.byTarget[name] = f
	}
	return f
}

// episode counts an episode that started in the window, as far as the
// window saw it.
func (c *figureCounts) episode(e Episode) {
	c.get(e.Target).StartedPerDay[day(e.Started)]++
	if e.Final == nil {
		return
	}
	took := e.Final.Sub(e.Started)
	if e.Escalated == nil {
		c.auto[e.Target] = append(c.auto[e.Target], took)
	} else {
		c.people[e.Target] = append(c.people[e.Target], took)
		c.escalation[e.Target] = append(c.escalation[e.Target], e.Final.Sub(*e.Escalated))
	}
	if c.final[e.Target] == nil {
		c.final[e.Target] = map[string][]time.Duration{}
	}
	d := day(*e.Final)
	c.final[e.Target][d] = append(c.final[e.Target][d], took)
}

// finish sorts the targets and computes each measure.
func (c *figureCounts) finish(tenant string, w Window) TenantFigures {
	out := TenantFigures{Tenant: tenant, Since: w.Since, Until: w.Until}
	for name, f := range c.byTarget {
		f.Automatic, f.ByPeople, f.Escalation = measure(c.auto[name]), measure(c.people[name]), measure(c.escalation[name])
		for d, ds := range c.final[name] {
			f.FinalPerDay[d] = measure(ds)
		}
		out.Targets = append(out.Targets, *f)
	}
	sort.Slice(out.Targets, func(i, j int) bool { return out.Targets[i].Target < out.Targets[j].Target })
	return out
}

// measure is the count, median (the mean of the middle two of an even
// count) and worst of d, which it sorts.
func measure(d []time.Duration) Measure {
	slices.Sort(d)
	n := len(d)
	if n == 0 {
		return Measure{}
	}
	m := Measure{Count: n, Worst: d[n-1], Median: d[n/2]}
	if n%2 == 0 {
		m.Median = (d[n/2-1] + d[n/2]) / 2
	}
	return m
}

// Rollup is what the daily rollups hold for a tenant over whole UTC days:
// the targets with any transition counted by the figures, the episodes
// that started in the window, and the entries into ESCALATED in it.
type Rollup struct {
	Targets     []string
	Episodes    []Episode
	Escalations []Escalation
}

// Escalation is one entry into ESCALATED, as the rollups keep it.
type Escalation struct {
	Target string
	At     time.Time
}

// RollupStore reads the figure rollups that the stores keep with every
// transition (migrations 00018 and 00030), so that the figures cost a few
// rows of rare states instead of the tenant's whole event log.
type RollupStore interface {
	// FigureRollup returns the tenant's rollup for a window of whole UTC
	// days (Window.WholeDays); EInvalid for any other window, which only
	// the raw log answers. Episodes may be escalated or final after the
	// window.
	FigureRollup(ctx context.Context, tenant string, w Window) (Rollup, error)
}

// IsMidnightUTC reports whether t starts a UTC day: the rollups answer
// only windows of whole days.
func IsMidnightUTC(t time.Time) bool { return t.Equal(t.UTC().Truncate(24 * time.Hour)) }

// ComputeRollup turns a rollup into the figures ComputeFigures computes
// from the same history's transitions: the same numbers, exactly (a store
// test compares them on randomized histories). Episodes that started
// before the window are not in it, as ComputeFigures ignores the rest of
// an episode whose start it did not see; an escalation or a final state
// at or after the window's end is left out, as ComputeFigures never sees
// it.
func ComputeRollup(tenant string, w Window, r Rollup) TenantFigures {
	c := newFigureCounts()
	for _, name := range r.Targets {
		c.get(name)
	}
	for _, e := range r.Episodes {
		if e.Escalated != nil && !e.Escalated.Before(w.Until) {
			e.Escalated = nil
		}
		if e.Final != nil && !e.Final.Before(w.Until) {
			e.Final, e.FinalState = nil, ""
		}
		c.episode(e)
	}
	for _, e := range r.Escalations {
		f := c.get(e.Target)
		f.Escalated++
		f.EscalatedPerDay[day(e.At)]++
	}
	return c.finish(tenant, w)
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

// FigureDriver is the SQL the manager figures are read with.
type FigureDriver interface {
	// FigureTransitions returns the tenant's transitions into UNKNOWN,
	// SUCCEEDED, FAILED_TERMINAL and ESCALATED in w, oldest first.
	FigureTransitions(ctx context.Context, tenant string, w Window) ([]Transition, error)
	// OperationTenants lists the tenants that have operations, in order.
	OperationTenants(ctx context.Context) ([]string, error)
	// FigureTargets lists the targets of the rollup's days in [since, until)
	// (UTC days, "2006-01-02").
	FigureTargets(ctx context.Context, tenant, sinceDay, untilDay string) ([]string, error)
	// FigureEpisodes returns the rollup's episodes that started in w.
	FigureEpisodes(ctx context.Context, tenant string, w Window) ([]Episode, error)
	// FigureEscalations returns the rollup's escalations in w.
	FigureEscalations(ctx context.Context, tenant string, w Window) ([]Escalation, error)
	// FigureRowsOf reads what Figures reads of each tenant, for several
	// tenants at once, in one statement per table: the all-tenants
	// overview.
	FigureRowsOf(ctx context.Context, p FigureRowsParams) (FigureRows, error)
}

// FigureRowsParams are FigureDriver.FigureRowsOf's: the tenants, a window
// of whole UTC days as instants and as days ("2006-01-02"), and the kind of
// finding counted (duplicates).
type FigureRowsParams struct {
	Tenants            []string
	Since, Until       time.Time
	SinceDay, UntilDay string
	Finding            FindingKind
}

// FigureRows are several tenants' rollup rows, each naming its tenant, with
// their counts by tenant (tenants with none are absent).
type FigureRows struct {
	Targets          []TenantTarget
	Episodes         []TenantEpisode
	Escalations      []TenantEscalation
	PayloadConflicts map[string]int
	Findings         map[string]int
	Open             []OpenEscalations
}

// TenantTarget is a target in a tenant's rollup days.
type TenantTarget struct{ Tenant, Target string }

// TenantEpisode is an Episode of the tenant's.
type TenantEpisode struct {
	Tenant string
	Episode
}

// TenantEscalation is an Escalation of the tenant's.
type TenantEscalation struct {
	Tenant string
	Escalation
}

// OpenEscalations counts a tenant's operations ESCALATED now on one target,
// with the last change of the oldest (its escalation).
type OpenEscalations struct {
	Tenant, Target string
	Count          int
	Oldest         time.Time
}

// figureRowsBatch bounds the tenants of one FigureRowsOf: the statements'
// parameters stay far inside SQLite's limit.
const figureRowsBatch = 500

// FiguresOf reads the figures of tenants over w, in the order of tenants,
// as Figures reads each (the same numbers): for a window of whole UTC days
// in six statements per 500 tenants, whatever their number, where Figures
// takes six or more per tenant; for any other window, tenant by tenant.
func (l *Ledger) FiguresOf(ctx context.Context, tenants []string, w Window) ([]TenantFigures, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	if !w.WholeDays() {
		return figuresEach(ctx, l, tenants, w)
	}
	out := make([]TenantFigures, 0, len(tenants))
	for chunk := range slices.Chunk(tenants, figureRowsBatch) {
		rows, err := l.d.FigureRowsOf(ctx, FigureRowsParams{Tenants: chunk, Since: w.Since.UTC(), Until: w.Until.UTC(),
			SinceDay: w.Since.UTC().Format(time.DateOnly), UntilDay: w.Until.UTC().Format(time.DateOnly), Finding: FindingDuplicate})
		if err != nil {
			return nil, fmt.Errorf("figures of %d tenants: %w", len(chunk), err)
		}
		rollups := make(map[string]*Rollup, len(chunk))
		for _, t := range chunk {
			rollups[t] = &Rollup{}
		}
		for _, r := range rows.Targets {
			rollups[r.Tenant].Targets = append(rollups[r.Tenant].Targets, r.Target)
		}
		for _, r := range rows.Episodes {
			rollups[r.Tenant].Episodes = append(rollups[r.Tenant].Episodes, r.Episode)
		}
		for _, r := range rows.Escalations {
			rollups[r.Tenant].Escalations = append(rollups[r.Tenant].Escalations, r.Escalation)
		}
		first := len(out)
		at := make(map[string]int, len(chunk))
		for i, t := range chunk {
			f := ComputeRollup(t, w, *rollups[t])
			f.PayloadConflicts, f.Duplicates = rows.PayloadConflicts[t], rows.Findings[t]
			out = append(out, f)
			at[t] = first + i
		}
		for _, o := range rows.Open {
			f := &out[at[o.Tenant]]
			oldest := o.Oldest
			f.OpenEscalations += o.Count
			if f.OldestEscalation == nil || oldest.Before(*f.OldestEscalation) {
				f.OldestEscalation = &oldest
			}
			t := targetOf(f, o.Target)
			t.OpenEscalations += o.Count
			if t.OldestEscalation == nil || oldest.Before(*t.OldestEscalation) {
				t.OldestEscalation = &oldest
			}
		}
	}
	return out, nil
}

// Transitions implements FigureStore.
func (l *Ledger) Transitions(ctx context.Context, tenant string, w Window) ([]Transition, error) {
	ts, err := l.d.FigureTransitions(ctx, tenant, w)
	if err != nil {
		return nil, fmt.Errorf("transitions: %w", err)
	}
	return ts, nil
}

// Tenants implements TenantLister.
func (l *Ledger) Tenants(ctx context.Context) ([]string, error) {
	ts, err := l.d.OperationTenants(ctx)
	if err != nil {
		return nil, fmt.Errorf("tenants: %w", err)
	}
	return ts, nil
}

// FigureRollup implements RollupStore: three index range reads of the
// rollup tables (migrations 00018 and 00030), whatever the size of the
// event log.
func (l *Ledger) FigureRollup(ctx context.Context, tenant string, w Window) (Rollup, error) {
	if !w.WholeDays() {
		return Rollup{}, Errorf(EInvalid, "rollups answer whole UTC days")
	}
	var (
		r   Rollup
		err error
	)
	r.Targets, err = l.d.FigureTargets(ctx, tenant, w.Since.UTC().Format(time.DateOnly), w.Until.UTC().Format(time.DateOnly))
	if err == nil {
		r.Episodes, err = l.d.FigureEpisodes(ctx, tenant, w)
	}
	if err == nil {
		r.Escalations, err = l.d.FigureEscalations(ctx, tenant, w)
	}
	if err != nil {
		return Rollup{}, fmt.Errorf("figure rollup: %w", err)
	}
	return r, nil
}
