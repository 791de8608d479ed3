package ledgertest

import (
	"testing"
	"time"

	"settle/ledger"
)

// testWindow checks that the same-key replay window starts when the
// operation is first claimed for sending, not when it is created: an
// operation that waits behind slow sends must still reach the target with
// its whole window ahead of it.
func testWindow(t *testing.T, h Harness) {
	const window = 24 * time.Hour
	queued := 10 * time.Minute // time spent PREPARED behind other sends

	t.Run("Claim", func(t *testing.T) {
		f := setup(t, h)
		op := f.create("acme")
		if op.FirstClaimedAt != nil || op.RetryWindow != window {
			t.Fatalf("created: first claimed %v, window %s; want none, %s", op.FirstClaimedAt, op.RetryWindow, window)
		}
		if got := f.get(op); got.FirstClaimedAt != nil || got.RetryWindow != window {
			t.Fatalf("stored: first claimed %v, window %s; want none, %s", got.FirstClaimedAt, got.RetryWindow, window)
		}
		f.clk.Advance(queued)
		got, err := f.store.Claim(f.ctx, op.Tenant, op.ID, op.PayloadHash, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if want := f.clk.Now().Add(window); !got.RetryWindowEnd.Equal(want) {
			t.Fatalf("window ends %s, want %s (claim + window)", got.RetryWindowEnd, want)
		}
		if got.FirstClaimedAt == nil || !got.FirstClaimedAt.Equal(f.clk.Now()) || got.RetryWindow != window {
			t.Fatalf("claimed: first claimed %v, window %s; want %s, %s", got.FirstClaimedAt, got.RetryWindow, f.clk.Now(), window)
		}
		stored := f.get(op)
		if !stored.RetryWindowEnd.Equal(got.RetryWindowEnd) || !timeEq(stored.FirstClaimedAt, got.FirstClaimedAt) {
			t.Fatal("the stored window differs from the claimed one")
		}
	})

	t.Run("ClaimBatch", func(t *testing.T) {
		f := setup(t, h)
		a := f.create("acme")
		f.clk.Advance(time.Minute)
		b := f.create("globex")
		f.clk.Advance(queued)
		got, err := f.store.ClaimBatch(f.ctx, 10, time.Minute)
		if err != nil || len(got) != 2 {
			t.Fatalf("claimed %d, %v", len(got), err)
		}
		for _, op := range append(got, f.get(a), f.get(b)) {
			if want := f.clk.Now().Add(window); !op.RetryWindowEnd.Equal(want) {
				t.Fatalf("window ends %s, want %s (claim + window)", op.RetryWindowEnd, want)
			}
			if op.FirstClaimedAt == nil || !op.FirstClaimedAt.Equal(f.clk.Now()) {
				t.Fatalf("first claimed %v, want %s", op.FirstClaimedAt, f.clk.Now())
			}
		}
	})

	// No documented retention: the window ends at the claim, so no replay.
	t.Run("Zero", func(t *testing.T) {
		f := setup(t, h)
		n := f.newOp("acme")
		n.RetryWindow = 0
		op, _, err := f.store.Create(f.ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.store.Claim(f.ctx, op.Tenant, op.ID, op.PayloadHash, time.Minute)
		if err != nil || got.RetryWindow != 0 || !got.RetryWindowEnd.Equal(f.clk.Now()) {
			t.Fatalf("zero window: %s ending %s, %v", got.RetryWindow, got.RetryWindowEnd, err)
		}
	})

	t.Run("LaterTransitionsKeepIt", func(t *testing.T) {
		f := setup(t, h)
		op := f.create("acme")
		f.clk.Advance(queued)
		claimed, err := f.store.Claim(f.ctx, op.Tenant, op.ID, op.PayloadHash, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		end := claimed.RetryWindowEnd
		f.clk.Advance(time.Minute + time.Second)
		if _, err := f.store.SweepExpired(f.ctx); err != nil {
			t.Fatal(err)
		}
		leased := f.lease(f.get(op))
		f.clk.Advance(time.Second)
		sent := f.clk.Now()
		o := outcome(leased, ledger.Unknown, ledger.Unknown)
		o.SentAt = &sent // a same-key replay: a send, but not a claim
		f.clk.Advance(time.Second)
		got, err := f.store.Record(f.ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		if !got.RetryWindowEnd.Equal(end) || !timeEq(got.FirstClaimedAt, claimed.FirstClaimedAt) {
			t.Fatalf("window %v–%s moved to %v–%s after sweep, lease and a replay",
				claimed.FirstClaimedAt, end, got.FirstClaimedAt, got.RetryWindowEnd)
		}
	})

	// A later send answered "this request did nothing" ends the replay
	// window at once; the end never moves later, and only the reconciler,
	// from UNKNOWN, can end it.
	t.Run("EndReplay", func(t *testing.T) {
		f := setup(t, h)
		first := f.unknown("acme")
		f.unknown("acme") // another one, whose window must not move
		leased, err := f.store.LeaseUnknown(f.ctx, 10, time.Minute)
		if err != nil || len(leased) != 2 {
			t.Fatalf("leased %d, %v", len(leased), err)
		}
		if leased[0].ID != first.ID {
			leased[0], leased[1] = leased[1], leased[0]
		}
		a, b := leased[0], leased[1]
		f.clk.Advance(time.Second)
		ended := f.clk.Now()
		oa, ob := outcome(a, ledger.Unknown, ledger.Unknown), outcome(b, ledger.Unknown, ledger.Unknown)
		oa.EndReplay = true
		errs, err := f.store.RecordBatch(f.ctx, []ledger.Outcome{oa, ob})
		if err != nil || errs[0] != nil || errs[1] != nil {
			t.Fatalf("record: %v %v", errs, err)
		}
		if got := f.get(a); !got.RetryWindowEnd.Equal(ended) {
			t.Fatalf("window ends %s, want %s (ended by the record)", got.RetryWindowEnd, ended)
		}
		if got := f.get(b); !got.RetryWindowEnd.Equal(b.RetryWindowEnd) {
			t.Fatalf("another operation's window moved to %s", got.RetryWindowEnd)
		}
		f.clk.Advance(time.Minute + time.Second) // past the reconciler's lease: due again
		a = f.lease(f.get(a))
		again := outcome(a, ledger.Unknown, ledger.Unknown)
		again.EndReplay = true
		if got, err := f.store.Record(f.ctx, again); err != nil || !got.RetryWindowEnd.Equal(ended) {
			t.Fatalf("ended again: window ends %s, %v; want it to stay %s", got.RetryWindowEnd, err, ended)
		}

		sender := outcome(f.claim("acme"), ledger.InFlight, ledger.Unknown)
		sender.EndReplay = true
		_, err = f.store.Record(f.ctx, sender)
		wantCode(t, err, ledger.EInvalid)
	})
}
