package reconciler_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/storetest"
	"settle/target"
	"settle/target/sim"
)

// Issue 9, "Safety first": replays must never be able to duplicate an
// effect, and the ledger must never claim an outcome a later send cannot
// prove.

// A replay that could land after the target forgot the key is never sent.
// The target keeps keys for 2s and holds every first answer for 2.5s; a
// replay sent inside settle's window waits behind the first request and
// reaches the key after the target forgot it, so the target creates a
// second object. The reconciler must look the object up instead.
func TestSafety_NoReplayThatCouldOutliveTheKey(t *testing.T) {
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		const n = 5
		slow := 2500 * time.Millisecond
		r := newRig(t, h, sim.Config{Class: "A", Retention: 2 * time.Second, SlowDelay: slow}, nil)
		var ops []ledger.Operation
		for i := 0; i < n; i++ {
			r.sim.Script(sim.Slow) // commits, then holds the answer past the client's timeout
			ops = append(ops, r.create("acme", fmt.Sprintf("order-%d", i), 100+i))
		}
		start := time.Now()
		settled := func() bool {
			if time.Since(start) < slow+time.Second {
				return false // until every held answer was written and every waiting replay acted
			}
			for _, op := range ops {
				if s := r.get(op).State; s != ledger.Succeeded && s != ledger.Escalated {
					return false
				}
			}
			return true
		}
		r.runUntil("every operation resolved", 20*time.Second, settled, r.executor(r.store), r.sweeper(), r.reconciler())
		duplicates := 0
		for _, op := range ops {
			if r.remote(op) > 1 {
				duplicates++
			}
		}
		if duplicates > 0 {
			t.Fatalf("%d of %d operations were charged more than once (%d create requests)", duplicates, n, r.sim.Requests())
		}
		for _, op := range ops {
			if got := r.get(op); got.State != ledger.Succeeded || r.remote(op) != 1 {
				t.Fatalf("%s: %s with %d remote objects", op.IntentRef, got.State, r.remote(op))
			}
		}
	})
}

// A send cut off by a crash becomes UNKNOWN once its lease, fitted to the
// target's timeout, expires, and is replayed well inside a short window.
// The target offers no lookup, so only a replay can confirm it; with one
// lease of a minute for every target the window would be over first.
func TestSafety_CrashedSendReplayedInsideShortWindow(t *testing.T) {
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "A", Retention: 15 * time.Second, SlowDelay: time.Second},
			func(c *target.Contract) { c.Lookup = nil })
		r.sim.Script(sim.Slow) // commits, then holds the answer
		op := r.create("acme", "order-1", 500)
		exec := r.executor(r.store)
		exec.Lease, exec.Grace = 0, 10*time.Millisecond // each target's own lease
		r.runUntil("the request to arrive", 5*time.Second, func() bool { return r.remote(op) == 1 }, exec)
		claimed := r.get(op)
		if claimed.State != ledger.InFlight || claimed.LeaseExpiresAt == nil {
			t.Fatalf("a killed worker left %s", claimed.State)
		}
		if lease := claimed.LeaseExpiresAt.Sub(*claimed.FirstClaimedAt); lease != r.c.Lease() {
			t.Fatalf("claim lease %s, want the target's %s (timeout %s + %s)", lease, r.c.Lease(), r.c.Timeout, target.LeaseMargin)
		}
		r.runUntil("SUCCEEDED", 12*time.Second, r.isIn(op, ledger.Succeeded), r.sweeper(), r.reconciler())
		if n := r.remote(op); n != 1 {
			t.Fatalf("%d remote objects", n)
		}
		ev := r.lastEvent(op)
		if !strings.Contains(string(ev.Evidence), "same-key replay") {
			t.Fatalf("confirmed by %s (%s), want a same-key replay", ev.Evidence, ev.Reason)
		}
	})
}
