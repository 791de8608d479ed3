package ledgertest

import (
	"context"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"settle/ledger"
)

// testFigureRollups drives a randomized history of two tenants and two
// targets over several weeks, through the stores' own transitions and
// people's approved resolutions (confirm succeeded, confirm not applied,
// same-key replays whose episodes go on), and
// requires the rollups to give exactly the figures that ComputeFigures
// gives from the raw transitions, for whole-day windows starting on every
// day: open, and ending one, three and seven days later, so that most
// windows end in the past of the history and cut episodes in two.
func testFigureRollups(t *testing.T, h Harness) {
	f := setup(t, h)
	rs, ok := f.store.(ledger.RollupStore)
	fs, ok2 := f.store.(ledger.FigureStore)
	if !ok || !ok2 {
		t.Fatal("store does not implement ledger.RollupStore and ledger.FigureStore")
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rnd := rand.New(rand.NewPCG(seed, 7))
	people, ok := f.store.(ledger.ResolutionStore)
	if !ok {
		t.Fatal("store does not implement ledger.ResolutionStore")
	}
	src, ok3 := f.store.(ledger.FigureSource)
	batch, ok4 := f.store.(interface {
		FiguresOf(context.Context, []string, ledger.Window) ([]ledger.TenantFigures, error)
	})
	audits, ok5 := f.store.(ledger.AuditStore)
	if !ok3 || !ok4 || !ok5 {
		t.Fatal("store does not implement ledger.FigureSource, FiguresOf and ledger.AuditStore")
	}
	ada, grace := f.as("cli:ada", "Ada", "owner"), f.as("cli:grace", "Grace", "owner")
	start := f.clk.Now()
	var open, escalated []ledger.Operation // UNKNOWN and ESCALATED, held by their fence
	track := func(op ledger.Operation) {
		switch op.State {
		case ledger.Unknown:
			open = append(open, op)
		case ledger.Escalated:
			escalated = append(escalated, op)
		}
	}
	replays := 0
	for range 220 {
		f.clk.Advance(time.Duration(rnd.IntN(6*3600)) * time.Second)
		switch step := rnd.IntN(6); {
		case step < 2 && len(open) > 0:
			i := rnd.IntN(len(open))
			op := open[i]
			open = append(open[:i], open[i+1:]...)
			to := []ledger.State{ledger.Unknown, ledger.Succeeded, ledger.FailedTerminal, ledger.Escalated}[rnd.IntN(4)]
			track(f.record(op, ledger.Unknown, to))
			continue
		case step < 4 && len(escalated) > 0:
			// People resolve it: two owners, a minute to a day later.
			i := rnd.IntN(len(escalated))
			op := f.get(escalated[i])
			escalated = append(escalated[:i], escalated[i+1:]...)
			r := []ledger.Resolution{{To: ledger.Succeeded, RemoteRef: "ch_" + op.ID[:8]}, {To: ledger.FailedTerminal},
				{Kind: ledger.KindReplay, To: ledger.KindTo(ledger.KindReplay)}}[rnd.IntN(3)]
			if r.Kind == ledger.KindReplay && !ledger.ReplayOpen(op, 0, f.clk.Now()) {
				r = ledger.Resolution{To: ledger.FailedTerminal}
			}
			r.Tenant, r.OperationID, r.Reason = op.Tenant, op.ID, "checked at the target"
			p, err := people.Propose(ada, r)
			if err != nil {
				t.Fatalf("propose %+v: %v", r, err)
			}
			f.clk.Advance(time.Duration(60+rnd.IntN(24*3600)) * time.Second)
			got, err := people.Approve(grace, op.Tenant, p.ID)
			if err != nil {
				t.Fatalf("approve %+v: %v", r, err)
			}
			if got.State == ledger.Unknown {
				replays++
			}
			track(got)
			continue
		}
		n := f.newOp([]string{"acme", "globex"}[rnd.IntN(2)])
		n.Target = []string{"payments", "refunds"}[rnd.IntN(2)]
		op, _, err := f.store.Create(f.ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		// Now and then the client changes the payload (a refused payload
		// conflict), or the audit finds a duplicate: both are in the
		// figures.
		if rnd.IntN(6) == 0 {
			edited := n
			edited.Payload = []byte(`{"amount": 1, "currency": "EUR"}`)
			_, _, err := f.store.Create(f.ctx, edited)
			wantCode(t, err, ledger.EPayloadConflict)
		}
		if rnd.IntN(8) == 0 {
			if _, err := audits.RecordFinding(f.ctx, ledger.Finding{Tenant: op.Tenant, OperationID: op.ID,
				Kind: ledger.FindingDuplicate, RemoteIDs: []string{"ch_a", "ch_b"}}); err != nil {
				t.Fatal(err)
			}
		}
		if op, err = f.store.Claim(f.ctx, op.Tenant, op.ID, op.PayloadHash, time.Minute); err != nil {
			t.Fatal(err)
		}
		to := []ledger.State{ledger.Succeeded, ledger.FailedTerminal, ledger.Unknown, ledger.Unknown, ledger.Escalated}[rnd.IntN(5)]
		track(f.record(op, ledger.InFlight, to))
	}
	// One operation of each tenant is left ESCALATED, so that the open
	// escalations the overview counts are never all resolved by chance.
	for _, tenant := range []string{"acme", "globex"} {
		op, _, err := f.store.Create(f.ctx, f.newOp(tenant))
		if err != nil {
			t.Fatal(err)
		}
		if op, err = f.store.Claim(f.ctx, op.Tenant, op.ID, op.PayloadHash, time.Minute); err != nil {
			t.Fatal(err)
		}
		f.record(op, ledger.InFlight, ledger.Escalated)
	}
	end := f.clk.Now()
	if end.Sub(start) < 7*24*time.Hour {
		t.Fatalf("the history spans only %s", end.Sub(start))
	}
	checked, byPeople := 0, 0
	conflicts, duplicates, openEscalations := 0, 0, 0
	for day := start.Truncate(24 * time.Hour); day.Before(end); day = day.Add(24 * time.Hour) {
		windows := []ledger.Window{ledger.Since(day)}
		for _, n := range []int{1, 3, 7} {
			windows = append(windows, ledger.Window{Since: day, Until: day.AddDate(0, 0, n)})
		}
		tenants := []string{"acme", "globex", "nobody"}
		for _, w := range windows[1:] { // Figures reads at most 366 days
			// The all-tenants overview reads what Figures reads of each.
			all, err := batch.FiguresOf(f.ctx, tenants, w)
			if err != nil {
				t.Fatal(err)
			}
			for i, tenant := range tenants {
				one, err := ledger.Figures(f.ctx, src, tenant, w)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(all[i], one) {
					t.Fatalf("%s to %s, %s: FiguresOf\n%+v\nFigures\n%+v", w.Since.Format(time.DateOnly), w.Until.Format(time.DateOnly), tenant, all[i], one)
				}
				conflicts += one.PayloadConflicts
				duplicates += one.Duplicates
				openEscalations += one.OpenEscalations
			}
		}
		for _, tenant := range tenants {
			for _, w := range windows {
				ts, err := fs.Transitions(f.ctx, tenant, w)
				if err != nil {
					t.Fatal(err)
				}
				want := ledger.ComputeFigures(tenant, w, ts)
				r, err := rs.FigureRollup(f.ctx, tenant, w)
				if err != nil {
					t.Fatal(err)
				}
				got := ledger.ComputeRollup(tenant, w, r)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s to %s, %s: rollup\n%+v\nraw\n%+v", w.Since.Format(time.DateOnly), w.Until.Format(time.DateOnly), tenant, got, want)
				}
				for _, tf := range want.Targets {
					if tf.Automatic.Count > 0 && w.Until.Before(end) {
						checked++
					}
					if tf.ByPeople.Count > 0 && w.Until.Before(end) {
						byPeople++
					}
				}
			}
		}
	}
	if checked == 0 || byPeople == 0 {
		t.Fatalf("windows ending in the past with episodes resolved automatically: %d, by people: %d: the comparison proved too little", checked, byPeople)
	}
	if conflicts == 0 || duplicates == 0 || openEscalations == 0 {
		t.Fatalf("the overview's windows held %d payload conflicts, %d duplicates and %d open escalations: the comparison proved too little",
			conflicts, duplicates, openEscalations)
	}
	t.Logf("%d approved replays; the overview's windows held %d payload conflicts, %d duplicates, %d open escalations",
		replays, conflicts, duplicates, openEscalations)
	_, err := rs.FigureRollup(f.ctx, "acme", ledger.Since(start))
	wantCode(t, err, ledger.EInvalid)
	day := start.Truncate(24 * time.Hour)
	_, err = rs.FigureRollup(f.ctx, "acme", ledger.Window{Since: day, Until: day.Add(36 * time.Hour)})
	wantCode(t, err, ledger.EInvalid)
}
