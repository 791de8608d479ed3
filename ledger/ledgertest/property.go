package ledgertest

import (
	"math/rand/v2"
	"testing"
	"time"

	"settle/ledger"
)

// testProperty applies random sequences of create, claim, batch claim,
// record (by current and stale holders), sweep, reconciler lease and clock
// moves, then checks every operation's whole history against the transition
// table: nothing ever returns to PREPARED, no operation is claimed for
// sending twice, fences never go backwards, and SUCCEEDED always carries a
// remote reference.
func testProperty(t *testing.T, h Harness) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run("Seed"+string(rune('0'+seed)), func(t *testing.T) {
			f := setup(t, h)
			rng := rand.New(rand.NewPCG(seed, 42))
			var (
				ops     []ledger.Operation // as created
				holders []ledger.Operation // every fence ever handed out, stale or not
			)
			pick := func(list []ledger.Operation) (ledger.Operation, bool) {
				if len(list) == 0 {
					return ledger.Operation{}, false
				}
				return list[rng.IntN(len(list))], true
			}
			tenants := []string{"acme", "globex", "initech"}
			for step := 0; step < 250; step++ {
				switch rng.IntN(8) {
				case 0:
					ops = append(ops, f.create(tenants[rng.IntN(len(tenants))]))
				case 1:
					if op, ok := pick(ops); ok {
						if got, err := f.store.Claim(f.ctx, op.Tenant, op.ID, op.PayloadHash, time.Duration(1+rng.IntN(60))*time.Second); err == nil {
							holders = append(holders, got)
						}
					}
				case 2:
					got, err := f.store.ClaimBatch(f.ctx, 1+rng.IntN(4), time.Duration(1+rng.IntN(60))*time.Second)
					if err != nil {
						t.Fatal(err)
					}
					holders = append(holders, got...)
				case 3, 4:
					if hd, ok := pick(holders); ok {
						to := ledger.States[rng.IntN(len(ledger.States))]
						from := hd.State
						if from == ledger.Prepared {
							from = ledger.InFlight
						}
						o := outcome(hd, from, to)
						if rng.IntN(2) == 0 {
							next := f.clk.Now().Add(time.Duration(rng.IntN(120)) * time.Second)
							o.NextAt = &next
						}
						_, _ = f.store.Record(f.ctx, o) // refusals are expected
					}
				case 5:
					if _, err := f.store.SweepExpired(f.ctx); err != nil {
						t.Fatal(err)
					}
				case 6:
					got, err := f.store.LeaseUnknown(f.ctx, 1+rng.IntN(3), time.Duration(1+rng.IntN(60))*time.Second)
					if err != nil {
						t.Fatal(err)
					}
					holders = append(holders, got...)
				case 7:
					f.clk.Advance(time.Duration(rng.IntN(90)) * time.Second)
				}
			}
			for _, op := range ops {
				checkHistory(t, f, op)
			}
		})
	}
}

func checkHistory(t *testing.T, f *fixture, op ledger.Operation) {
	t.Helper()
	cur := f.get(op)
	evs, err := f.store.Events(f.ctx, op.Tenant, op.ID)
	if err != nil {
		t.Fatal(err)
	}
	if evs[0].From != "" || evs[0].To != ledger.Prepared {
		t.Fatalf("%s: first event %s → %s", op.ID, evs[0].From, evs[0].To)
	}
	state, fence, claims := ledger.Prepared, int64(0), 0
	for _, e := range evs[1:] {
		if e.From != state {
			t.Fatalf("%s: event from %s but the operation was %s", op.ID, e.From, state)
		}
		if !ledger.CanTransition(e.From, e.To) || e.To == ledger.Prepared {
			t.Fatalf("%s: %s → %s left the transition graph", op.ID, e.From, e.To)
		}
		if e.Fence < fence {
			t.Fatalf("%s: fence went back from %d to %d", op.ID, fence, e.Fence)
		}
		if e.To == ledger.InFlight {
			claims++
		}
		state, fence = e.To, e.Fence
	}
	if cur.State != state || claims > 1 || cur.Attempts != claims {
		t.Fatalf("%s: state %s (history says %s), claimed %d times, attempts %d", op.ID, cur.State, state, claims, cur.Attempts)
	}
	if cur.State == ledger.Succeeded && cur.RemoteRef == "" {
		t.Fatalf("%s: SUCCEEDED without a remote reference", op.ID)
	}
}
