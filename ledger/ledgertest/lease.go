package ledgertest

import (
	"testing"
	"time"

	"settle/ledger"
)

// testTargetLeases checks that ClaimBatch, which claims the operations of
// many targets at once, gives each claim the lease of its own target, so
// that a send cut off by a crash expires into UNKNOWN on its target's time.
func testTargetLeases(t *testing.T, h Harness) {
	t.Run("PerTarget", func(t *testing.T) {
		f := setup(t, h)
		on := func(target string) ledger.Operation {
			n := f.newOp("acme")
			n.Target = target
			op, _, err := f.store.Create(f.ctx, n)
			if err != nil {
				t.Fatal(err)
			}
			return op
		}
		fast, slow, other := on("fast"), on("slow"), on("other")
		got, err := f.store.ClaimBatch(f.ctx, 10, time.Minute,
			ledger.TargetLease{Target: "fast", Lease: 7 * time.Second},
			ledger.TargetLease{Target: "slow", Lease: 2 * time.Minute})
		if err != nil || len(got) != 3 {
			t.Fatalf("claimed %d, %v", len(got), err)
		}
		now := f.clk.Now()
		for _, c := range []struct {
			op    ledger.Operation
			lease time.Duration
		}{{fast, 7 * time.Second}, {slow, 2 * time.Minute}, {other, time.Minute}} {
			for _, op := range append(got, f.get(c.op)) {
				if op.ID != c.op.ID {
					continue
				}
				if op.LeaseExpiresAt == nil || !op.LeaseExpiresAt.Equal(now.Add(c.lease)) {
					t.Fatalf("target %s: lease expires %v, want %s", op.Target, op.LeaseExpiresAt, now.Add(c.lease))
				}
			}
		}
		f.clk.Advance(8 * time.Second)
		if n, err := f.store.SweepExpired(f.ctx); err != nil || n != 1 {
			t.Fatalf("swept %d, %v; want only the fast target's claim", n, err)
		}
		if f.get(fast).State != ledger.Unknown || f.get(slow).State != ledger.InFlight || f.get(other).State != ledger.InFlight {
			t.Fatal("the sweep expired the wrong claim")
		}
	})

	t.Run("Invalid", func(t *testing.T) {
		f := setup(t, h)
		op := f.create("acme")
		for name, leases := range map[string][]ledger.TargetLease{
			"Zero":     {{Target: "payments", Lease: 0}},
			"Negative": {{Target: "payments", Lease: -time.Second}},
			"Twice":    {{Target: "payments", Lease: time.Second}, {Target: "payments", Lease: time.Minute}},
		} {
			_, err := f.store.ClaimBatch(f.ctx, 10, time.Minute, leases...)
			if ledger.ErrorCode(err) != ledger.EInvalid {
				t.Fatalf("%s: %v, want invalid", name, err)
			}
		}
		if got := f.get(op); got.State != ledger.Prepared {
			t.Fatalf("an invalid batch claimed: %s", got.State)
		}
	})
}
