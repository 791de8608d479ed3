package ledgertest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"settle/ledger"
)

// RunLeader checks ledger.LeaderStore on the stores h makes: one holder
// per duty, renewals keep it, an expired lease passes to another replica
// by the store's clock, a release frees it at once, and replicas racing
// for a free duty elect exactly one.
func RunLeader(t *testing.T, h Harness) {
	t.Run("AcquireAndRenew", func(t *testing.T) { testLeaderAcquire(t, h) })
	t.Run("ExpiryTakeover", func(t *testing.T) { testLeaderExpiry(t, h) })
	t.Run("Release", func(t *testing.T) { testLeaderRelease(t, h) })
	t.Run("Invalid", func(t *testing.T) { testLeaderInvalid(t, h) })
	t.Run("Race", func(t *testing.T) { testLeaderRace(t, h) })
}

func (f *fixture) leaders() ledger.LeaderStore {
	f.t.Helper()
	ls, ok := f.store.(ledger.LeaderStore)
	if !ok {
		f.t.Fatal("store does not implement ledger.LeaderStore")
	}
	return ls
}

// acquire calls AcquireLeader and wants leads.
func (f *fixture) acquire(ls ledger.LeaderStore, duty, holder string, ttl time.Duration, leads bool) {
	f.t.Helper()
	got, err := ls.AcquireLeader(f.ctx, duty, holder, ttl)
	if err != nil || got != leads {
		f.t.Fatalf("%s acquires %s: leads=%v, %v; want leads=%v", holder, duty, got, err, leads)
	}
}

// wantLeader checks the live lease of duty.
func (f *fixture) wantLeader(ls ledger.LeaderStore, duty, holder string, elected, expires time.Time) {
	f.t.Helper()
	l, err := ls.CurrentLeader(f.ctx, duty)
	if err != nil || l.Duty != duty || l.Holder != holder || !l.ElectedAt.Equal(elected) || !l.ExpiresAt.Equal(expires) {
		f.t.Fatalf("leader of %s: %+v, %v; want %s elected %s until %s", duty, l, err, holder, elected, expires)
	}
}

func testLeaderAcquire(t *testing.T, h Harness) {
	f := setup(t, h)
	ls := f.leaders()
	_, err := ls.CurrentLeader(f.ctx, "auditor")
	wantCode(t, err, ledger.ENotFound)

	t0 := f.clk.Now()
	f.acquire(ls, "auditor", "replica-a", 30*time.Second, true)
	f.wantLeader(ls, "auditor", "replica-a", t0, t0.Add(30*time.Second))
	// Held: another replica does not get it, and does not disturb it.
	f.acquire(ls, "auditor", "replica-b", 30*time.Second, false)
	f.wantLeader(ls, "auditor", "replica-a", t0, t0.Add(30*time.Second))

	// A renewal before expiry moves the expiry, not the election.
	f.clk.Advance(10 * time.Second)
	f.acquire(ls, "auditor", "replica-a", 30*time.Second, true)
	f.wantLeader(ls, "auditor", "replica-a", t0, t0.Add(40*time.Second))

	// Duties are independent: b may lead another one.
	f.acquire(ls, "retention", "replica-b", time.Minute, true)
	f.wantLeader(ls, "retention", "replica-b", f.clk.Now(), f.clk.Now().Add(time.Minute))
	f.wantLeader(ls, "auditor", "replica-a", t0, t0.Add(40*time.Second))
}

func testLeaderExpiry(t *testing.T, h Harness) {
	f := setup(t, h)
	ls := f.leaders()
	t0 := f.clk.Now()
	f.acquire(ls, "auditor", "replica-a", 30*time.Second, true)

	// One microsecond before expiry the lease holds.
	f.clk.Advance(30*time.Second - time.Microsecond)
	f.acquire(ls, "auditor", "replica-b", 30*time.Second, false)
	f.wantLeader(ls, "auditor", "replica-a", t0, t0.Add(30*time.Second))

	// At expiry nobody leads, and the next replica to ask takes over.
	f.clk.Advance(time.Microsecond)
	_, err := ls.CurrentLeader(f.ctx, "auditor")
	wantCode(t, err, ledger.ENotFound)
	t1 := f.clk.Now()
	f.acquire(ls, "auditor", "replica-b", 30*time.Second, true)
	f.wantLeader(ls, "auditor", "replica-b", t1, t1.Add(30*time.Second))

	// The old holder, back from a pause, has lost it: its renewal fails.
	f.acquire(ls, "auditor", "replica-a", 30*time.Second, false)
	f.wantLeader(ls, "auditor", "replica-b", t1, t1.Add(30*time.Second))
}

func testLeaderRelease(t *testing.T, h Harness) {
	f := setup(t, h)
	ls := f.leaders()
	f.acquire(ls, "auditor", "replica-a", time.Minute, true)

	// Another replica's release does not free a's lease.
	if err := ls.ReleaseLeader(f.ctx, "auditor", "replica-b"); err != nil {
		t.Fatal(err)
	}
	f.acquire(ls, "auditor", "replica-b", time.Minute, false)

	if err := ls.ReleaseLeader(f.ctx, "auditor", "replica-a"); err != nil {
		t.Fatal(err)
	}
	_, err := ls.CurrentLeader(f.ctx, "auditor")
	wantCode(t, err, ledger.ENotFound)
	// Free at once, without waiting for the expiry.
	f.acquire(ls, "auditor", "replica-b", time.Minute, true)
	f.wantLeader(ls, "auditor", "replica-b", f.clk.Now(), f.clk.Now().Add(time.Minute))
	// Releasing what one does not hold is harmless.
	if err := ls.ReleaseLeader(f.ctx, "auditor", "replica-a"); err != nil {
		t.Fatal(err)
	}
	f.wantLeader(ls, "auditor", "replica-b", f.clk.Now(), f.clk.Now().Add(time.Minute))
}

func testLeaderInvalid(t *testing.T, h Harness) {
	f := setup(t, h)
	ls := f.leaders()
	for _, c := range []struct {
		duty, holder string
		ttl          time.Duration
	}{
		{"", "replica-a", time.Minute},
		{"auditor", "", time.Minute},
		{"auditor", "replica-a", 0},
		{"auditor", "replica-a", -time.Second},
		{string(make([]byte, 101)), "replica-a", time.Minute},
	} {
		_, err := ls.AcquireLeader(f.ctx, c.duty, c.holder, c.ttl)
		wantCode(t, err, ledger.EInvalid)
	}
	_, err := ls.CurrentLeader(f.ctx, "auditor")
	wantCode(t, err, ledger.ENotFound)
}

// testLeaderRace has replicas on separate connections ask for a free duty
// at once, over and over past each expiry: each round exactly one leads.
func testLeaderRace(t *testing.T, h Harness) {
	f := setup(t, h)
	stores := []ledger.LeaderStore{f.leaders()}
	if h.Sibling != nil {
		sib, ok := h.Sibling(t, f.store, f.clk.Now).(ledger.LeaderStore)
		if !ok {
			t.Fatal("sibling store does not implement ledger.LeaderStore")
		}
		stores = append(stores, sib)
	}
	const replicas, rounds = 6, 5
	for round := range rounds {
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			leaders []string
		)
		for i := range replicas {
			wg.Add(1)
			go func() {
				defer wg.Done()
				holder := fmt.Sprintf("replica-%d", i)
				ok, err := stores[i%len(stores)].AcquireLeader(f.ctx, "auditor", holder, time.Minute)
				if err != nil {
					t.Errorf("round %d, %s: %v", round, holder, err)
					return
				}
				if ok {
					mu.Lock()
					leaders = append(leaders, holder)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if len(leaders) != 1 {
			t.Fatalf("round %d: leaders %v; want exactly one", round, leaders)
		}
		l, err := stores[0].CurrentLeader(f.ctx, "auditor")
		if err != nil || l.Holder != leaders[0] {
			t.Fatalf("round %d: current leader %+v, %v; want %s", round, l, err, leaders[0])
		}
		f.clk.Advance(time.Minute)
	}
}
