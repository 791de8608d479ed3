package ledgertest

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"settle/ledger"
)

// testFigureRollups drives a randomized history of two tenants and two
// targets over several weeks, through the stores' own transitions, and
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
	start := f.clk.Now()
	var open []ledger.Operation // UNKNOWN, held by their fence
	for range 160 {
		f.clk.Advance(time.Duration(rnd.IntN(6*3600)) * time.Second)
		if len(open) > 0 && rnd.IntN(2) == 0 {
			i := rnd.IntN(len(open))
			op := open[i]
			to := []ledger.State{ledger.Unknown, ledger.Succeeded, ledger.FailedTerminal, ledger.Escalated}[rnd.IntN(4)]
			op = f.record(op, ledger.Unknown, to)
			if to == ledger.Unknown {
				open[i] = op
			} else {
				open = append(open[:i], open[i+1:]...)
			}
			continue
		}
		n := f.newOp([]string{"acme", "globex"}[rnd.IntN(2)])
		n.Target = []string{"payments", "refunds"}[rnd.IntN(2)]
		op, _, err := f.store.Create(f.ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		if op, err = f.store.Claim(f.ctx, op.Tenant, op.ID, op.PayloadHash, time.Minute); err != nil {
			t.Fatal(err)
		}
		to := []ledger.State{ledger.Succeeded, ledger.FailedTerminal, ledger.Unknown, ledger.Unknown, ledger.Escalated}[rnd.IntN(5)]
		op = f.record(op, ledger.InFlight, to)
		if to == ledger.Unknown {
			open = append(open, op)
		}
	}
	end := f.clk.Now()
	if end.Sub(start) < 7*24*time.Hour {
		t.Fatalf("the history spans only %s", end.Sub(start))
	}
	checked := 0
	for day := start.Truncate(24 * time.Hour); day.Before(end); day = day.Add(24 * time.Hour) {
		windows := []ledger.Window{ledger.Since(day)}
		for _, n := range []int{1, 3, 7} {
			windows = append(windows, ledger.Window{Since: day, Until: day.AddDate(0, 0, n)})
		}
		for _, tenant := range []string{"acme", "globex", "nobody"} {
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
					if tf.Resolved > 0 && w.Until.Before(end) {
						checked++
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no window ending in the past had a resolved episode: the comparison proved nothing")
	}
	_, err := rs.FigureRollup(f.ctx, "acme", ledger.Since(start))
	wantCode(t, err, ledger.EInvalid)
	day := start.Truncate(24 * time.Hour)
	_, err = rs.FigureRollup(f.ctx, "acme", ledger.Window{Since: day, Until: day.Add(36 * time.Hour)})
	wantCode(t, err, ledger.EInvalid)
}
