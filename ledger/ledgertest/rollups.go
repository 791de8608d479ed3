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
// gives from the raw transitions, for every whole-day window.
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
		for _, tenant := range []string{"acme", "globex", "nobody"} {
			ts, err := fs.Transitions(f.ctx, tenant, day)
			if err != nil {
				t.Fatal(err)
			}
			want := ledger.ComputeFigures(tenant, day, ts)
			r, err := rs.FigureRollup(f.ctx, tenant, day)
			if err != nil {
				t.Fatal(err)
			}
			got := ledger.ComputeRollup(tenant, day, r)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("since %s, %s: rollup\n%+v\nraw\n%+v", day.Format(time.DateOnly), tenant, got, want)
			}
			for _, tf := range want.Targets {
				if tf.Resolved > 0 {
					checked++
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no window had a resolved episode: the comparison proved nothing")
	}
	_, err := rs.FigureRollup(f.ctx, "acme", start)
	wantCode(t, err, ledger.EInvalid)
}
