package ledgertest

import (
	"testing"
	"time"

	"settle/ledger"
)

func testFigures(t *testing.T, h Harness) {
	f := setup(t, h)
	fs, ok := f.store.(ledger.FigureStore)
	if !ok {
		t.Fatal("store does not implement ledger.FigureStore")
	}
	start := f.clk.Now()
	op := f.unknown("acme") // entered UNKNOWN
	f.clk.Advance(3 * time.Minute)
	f.record(f.lease(op), ledger.Unknown, ledger.Succeeded)
	f.inState("acme", ledger.Escalated)
	f.unknown("globex")
	ts, err := fs.Transitions(f.ctx, "acme", ledger.Since(start))
	if err != nil {
		t.Fatal(err)
	}
	var got []ledger.State
	for _, tr := range ts {
		if tr.Target != "payments" {
			t.Fatalf("transition %+v lacks the target", tr)
		}
		got = append(got, tr.To)
	}
	want := []ledger.State{ledger.Unknown, ledger.Succeeded, ledger.Escalated}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("transitions %v, want %v (tenant-scoped, claims and creations left out)", got, want)
	}
	figs := ledger.ComputeFigures("acme", ledger.Since(start), ts)
	if len(figs.Targets) != 1 || figs.Targets[0].Automatic.Count != 1 || figs.Targets[0].Automatic.Median < 3*time.Minute || figs.Targets[0].Escalated != 1 {
		t.Fatalf("figures %+v", figs)
	}
	if later, _ := fs.Transitions(f.ctx, "acme", ledger.Since(f.clk.Now().Add(time.Second))); len(later) != 0 {
		t.Fatalf("since ignored: %d", len(later))
	}
	if first, _ := fs.Transitions(f.ctx, "acme", ledger.Window{Since: start, Until: ts[1].At}); len(first) != 1 || first[0].To != ledger.Unknown {
		t.Fatalf("until ignored: %+v", first)
	}
	// The assembled figures, as the CLI and the console read them (the
	// escalation queue is package resolve's, tested there).
	if src, ok := f.store.(ledger.FigureSource); ok {
		all, err := ledger.Figures(f.ctx, src, "acme", ledger.Window{Since: start, Until: f.clk.Now().Add(time.Second)})
		if err != nil || all.OpenEscalations != 1 || all.OldestEscalation == nil || len(all.Targets) != 1 ||
			all.Targets[0].Resolved() != 1 || all.Targets[0].OpenEscalations != 1 || all.PayloadConflicts != 0 || all.Duplicates != 0 {
			t.Fatalf("ledger.Figures: %+v, %v", all, err)
		}
	} else {
		t.Fatal("store does not implement ledger.FigureSource")
	}
}
