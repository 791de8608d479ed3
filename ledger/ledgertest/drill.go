package ledgertest

import (
	"testing"
	"time"

	"settle/ledger"
)

// RunDrills checks ledger.DrillStore on the stores h makes: a run is
// stored whole and read back by test number, the newest run of a target is
// the one returned, targets are apart, an invalid run is refused whole, and
// the live schema shows the identity index, the hash, fence and lease
// columns and the newest migration.
func RunDrills(t *testing.T, h Harness) {
	t.Run("RecordAndLatest", func(t *testing.T) { testDrillLatest(t, h) })
	t.Run("Invalid", func(t *testing.T) { testDrillInvalid(t, h) })
	t.Run("SchemaFacts", func(t *testing.T) { testSchemaFacts(t, h) })
}

func (f *fixture) drills() ledger.DrillStore {
	f.t.Helper()
	ds, ok := f.store.(ledger.DrillStore)
	if !ok {
		f.t.Fatal("store does not implement ledger.DrillStore")
	}
	return ds
}

func drillRun(run, target string, passed ...bool) []ledger.DrillResult {
	out := make([]ledger.DrillResult, len(passed))
	for i, p := range passed {
		out[i] = ledger.DrillResult{RunID: run, Target: target, Number: i + 1, Name: "test", Passed: p,
			Reason: "why", Evidence: map[string]any{"state": "SUCCEEDED", "remote_objects": 1}, Version: "v1"}
	}
	return out
}

func testDrillLatest(t *testing.T, h Harness) {
	f := setup(t, h)
	ds := f.drills()
	if _, err := ds.LatestDrill(f.ctx, "sim"); ledger.ErrorCode(err) != ledger.ENotFound {
		t.Fatalf("LatestDrill before any drill: %v; want ENotFound", err)
	}
	first := drillRun("run-1", "sim", true, false)
	first[1].NotApplicable = true
	if err := ds.RecordDrill(f.ctx, first); err != nil {
		t.Fatal(err)
	}
	f.clk.Advance(time.Hour)
	if err := ds.RecordDrill(f.ctx, drillRun("run-2", "other", false)); err != nil {
		t.Fatal(err)
	}
	got, err := ds.LatestDrill(f.ctx, "sim")
	if err != nil || len(got) != 2 {
		t.Fatalf("LatestDrill(sim) = %+v, %v; want run-1's two results", got, err)
	}
	r := got[1]
	if r.RunID != "run-1" || r.Number != 2 || r.Passed || !r.NotApplicable || r.Reason != "why" || r.Version != "v1" ||
		r.Evidence["state"] != "SUCCEEDED" || r.Evidence["remote_objects"] != float64(1) || !r.RanAt.Equal(f.clk.Now().Add(-time.Hour)) {
		t.Fatalf("LatestDrill(sim)[1] = %+v", r)
	}
	// A newer run of the same target replaces the older one, whatever its size.
	f.clk.Advance(time.Hour)
	if err := ds.RecordDrill(f.ctx, drillRun("run-3", "sim", true)); err != nil {
		t.Fatal(err)
	}
	got, err = ds.LatestDrill(f.ctx, "sim")
	if err != nil || len(got) != 1 || got[0].RunID != "run-3" || !got[0].Passed || !got[0].RanAt.Equal(f.clk.Now()) {
		t.Fatalf("LatestDrill(sim) after run-3 = %+v, %v", got, err)
	}
	other, err := ds.LatestDrill(f.ctx, "other")
	if err != nil || len(other) != 1 || other[0].RunID != "run-2" || other[0].Passed {
		t.Fatalf("LatestDrill(other) = %+v, %v", other, err)
	}
}

func testDrillInvalid(t *testing.T, h Harness) {
	f := setup(t, h)
	ds := f.drills()
	mixed := append(drillRun("run-a", "sim", true), drillRun("run-b", "sim", true)...)
	badNumber := drillRun("run-c", "sim", true)
	badNumber[0].Number = 0
	for name, run := range map[string][]ledger.DrillResult{
		"empty": nil, "two runs": mixed, "number": badNumber, "no target": drillRun("run-d", "", true),
	} {
		if err := ds.RecordDrill(f.ctx, run); ledger.ErrorCode(err) != ledger.EInvalid {
			t.Errorf("RecordDrill(%s) = %v; want EInvalid", name, err)
		}
	}
	// A duplicate test number fails the run whole: nothing of it is kept.
	dup := drillRun("run-e", "sim", true, true)
	dup[1].Number = 1
	if err := ds.RecordDrill(f.ctx, dup); err == nil {
		t.Fatal("RecordDrill with a duplicate test number succeeded")
	}
	if got, err := ds.LatestDrill(f.ctx, "sim"); ledger.ErrorCode(err) != ledger.ENotFound {
		t.Fatalf("LatestDrill after refused runs = %+v, %v; want ENotFound", got, err)
	}
}

func testSchemaFacts(t *testing.T, h Harness) {
	f := setup(t, h)
	got, err := f.drills().SchemaFacts(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !got.IntentUnique || got.Index == "" || !got.PayloadHash || !got.Fence || !got.Lease ||
		got.Version < 21 || got.Version != got.Latest {
		t.Fatalf("SchemaFacts = %+v; want the identity index, hash, fence and lease columns at the newest version", got)
	}
}
