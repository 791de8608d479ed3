package ledger_test

import (
	"reflect"
	"testing"
	"time"

	"settle/ledger"
)

// The figures by hand: time to a final state, split into episodes
// resolved automatically and by people (with the time people took), an
// episode started by an escalation without UNKNOWN, a replay that goes on
// within the same episode, and what the end of the window cuts off.
func TestComputeFigures(t *testing.T) {
	t.Parallel()
	day := time.Date(2030, 1, 1, 10, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return day.Add(d) }
	tr := func(op, target string, from, to ledger.State, d time.Duration) ledger.Transition {
		return ledger.Transition{OperationID: op, Target: target, From: from, To: to, At: at(d)}
	}
	const min, h = time.Minute, time.Hour
	ts := []ledger.Transition{
		tr("a", "pay", ledger.InFlight, ledger.Unknown, 0),
		tr("e", "ship", ledger.InFlight, ledger.Unknown, 0),
		tr("d", "pay", ledger.InFlight, ledger.Succeeded, min),  // never uncertain
		tr("a", "pay", ledger.Unknown, ledger.Unknown, min),     // a reconcile round, not a new episode
		tr("a", "pay", ledger.Unknown, ledger.Succeeded, 2*min), // automatic: 2 min
		tr("e", "ship", ledger.Unknown, ledger.FailedTerminal, 10*min),
		tr("b", "pay", ledger.InFlight, ledger.Unknown, h),
		tr("u", "pay", ledger.InFlight, ledger.Escalated, 2*h), // escalated unsent: an episode
		tr("b", "pay", ledger.Unknown, ledger.Escalated, 5*h),
		tr("u", "pay", ledger.Escalated, ledger.FailedTerminal, 2*h+250*time.Millisecond+30*min), // people: 30m0.25s
		tr("b", "pay", ledger.Escalated, ledger.Unknown, 6*h),                                    // an approved replay
		tr("b", "pay", ledger.Unknown, ledger.Escalated, 7*h),                                    // inconclusive: escalated again
		tr("b", "pay", ledger.Escalated, ledger.Succeeded, 9*h),                                  // people: 8 h from start, 4 h from the first escalation
		tr("c", "pay", ledger.InFlight, ledger.Unknown, 24*h),                                    // still pending
		tr("g", "pay", ledger.InFlight, ledger.Escalated, 25*h),                                  // still escalated
	}
	w := ledger.Since(day)
	f := ledger.ComputeFigures("acme", w, ts)
	d1, d2 := "2030-01-01", "2030-01-02"
	want := ledger.TenantFigures{Tenant: "acme", Since: w.Since, Until: w.Until, Targets: []ledger.TargetFigures{
		{Target: "pay", StartedPerDay: map[string]int{d1: 3, d2: 2},
			Automatic:   ledger.Measure{Count: 1, Median: 2 * min, Worst: 2 * min},
			ByPeople:    ledger.Measure{Count: 2, Median: (30*min + 250*time.Millisecond + 8*h) / 2, Worst: 8 * h},
			Escalation:  ledger.Measure{Count: 2, Median: (30*min + 250*time.Millisecond + 4*h) / 2, Worst: 4 * h},
			FinalPerDay: map[string]ledger.Measure{d1: {Count: 3, Median: 30*min + 250*time.Millisecond, Worst: 8 * h}},
			Escalated:   4, EscalatedPerDay: map[string]int{d1: 3, d2: 1}},
		{Target: "ship", StartedPerDay: map[string]int{d1: 1},
			Automatic:       ledger.Measure{Count: 1, Median: 10 * min, Worst: 10 * min},
			FinalPerDay:     map[string]ledger.Measure{d1: {Count: 1, Median: 10 * min, Worst: 10 * min}},
			EscalatedPerDay: map[string]int{}},
	}}
	if !reflect.DeepEqual(f, want) {
		t.Fatalf("figures\n%+v\nwant\n%+v", f, want)
	}
	if f.Targets[0].Resolved() != 3 {
		t.Errorf("resolved %d, want 3", f.Targets[0].Resolved())
	}

	// A window ending at 8 h: b is escalated but not final, u is final;
	// the rollup of the same episodes agrees.
	cut := ledger.Window{Since: day, Until: at(8 * h)}
	var in []ledger.Transition
	for _, x := range ts {
		if cut.Contains(x.At) {
			in = append(in, x)
		}
	}
	got := ledger.ComputeFigures("acme", cut, in)
	if p := got.Targets[0]; p.ByPeople.Count != 1 || p.ByPeople.Worst != 30*min+250*time.Millisecond ||
		p.Escalation.Worst != 30*min+250*time.Millisecond || p.Escalated != 3 {
		t.Fatalf("cut at 8 h: %+v", p)
	}
	ptr := func(d time.Duration) *time.Time { x := at(d); return &x }
	r := ledger.Rollup{Targets: []string{"pay", "ship"}, Episodes: []ledger.Episode{
		{Target: "pay", Started: at(0), Final: ptr(2 * min), FinalState: ledger.Succeeded},
		{Target: "ship", Started: at(0), Final: ptr(10 * min), FinalState: ledger.FailedTerminal},
		{Target: "pay", Started: at(h), Escalated: ptr(5 * h), Final: ptr(9 * h), FinalState: ledger.Succeeded},
		{Target: "pay", Started: at(2 * h), Escalated: ptr(2 * h), Final: ptr(2*h + 30*min + 250*time.Millisecond), FinalState: ledger.FailedTerminal},
	}, Escalations: []ledger.Escalation{{"pay", at(2 * h)}, {"pay", at(5 * h)}, {"pay", at(7 * h)}}}
	if roll := ledger.ComputeRollup("acme", cut, r); !reflect.DeepEqual(roll, got) {
		t.Fatalf("rollup cut at 8 h\n%+v\nraw\n%+v", roll, got)
	}
}

// Short times read in milliseconds, never "0s".
func TestFigureDuration(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		0: "0 ms", 124 * time.Millisecond: "124 ms", 999*time.Millisecond + 400*time.Microsecond: "999 ms",
		4500 * time.Millisecond: "4.5 s", 45 * time.Second: "45 s", 7*time.Minute + 30*time.Second: "7 min 30 s",
		3 * time.Minute: "3 min", 2*time.Hour + 5*time.Minute: "2 h 5 min", 24*time.Hour + 30*time.Minute: "24 h 30 min",
	} {
		if got := ledger.FigureDuration(d); got != want {
			t.Errorf("FigureDuration(%s) = %q, want %q", d, got, want)
		}
	}
}
