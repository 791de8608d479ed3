package reconciler_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/storetest"
	"settle/reconciler"
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
		r.runUntil("every operation resolved", settled, r.executor(r.store), r.sweeper(), r.reconciler())
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
		r.runUntil("the request to arrive", func() bool { return r.remote(op) == 1 }, exec)
		claimed := r.get(op)
		if claimed.State != ledger.InFlight || claimed.LeaseExpiresAt == nil {
			t.Fatalf("a killed worker left %s", claimed.State)
		}
		if lease := claimed.LeaseExpiresAt.Sub(*claimed.FirstClaimedAt); lease != r.c.Lease() {
			t.Fatalf("claim lease %s, want the target's %s (timeout %s + %s)", lease, r.c.Lease(), r.c.Timeout, target.LeaseMargin)
		}
		r.runUntil("SUCCEEDED", r.isIn(op, ledger.Succeeded), r.sweeper(), r.reconciler())
		if n := r.remote(op); n != 1 {
			t.Fatalf("%d remote objects", n)
		}
		if ev := r.lastEvent(op); evidence(t, ev)["via"] != "same-key replay" {
			t.Fatalf("confirmed by %s (%s), want a same-key replay", ev.Evidence, ev.Reason)
		}
	})
}

// Only the very first send of an operation can end FAILED_TERMINAL from the
// status table. The first send commits and its answer is lost; the replay
// is answered 429, documented as "this request did nothing", which says
// nothing about the first: the operation stays UNKNOWN, is not replayed
// into the same answer again, and is confirmed by lookup — or, with no
// lookup, escalated. Never FAILED_TERMINAL, one remote object.
func TestSafety_LaterSendNeverProvesAbsence(t *testing.T) {
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		t.Run("ReplayRateLimitedThenLookup", func(t *testing.T) {
			r := newRig(t, h, sim.Config{Class: "A"}, nil)
			r.sim.Script(sim.DropAfterCommit, sim.RateLimited)
			op := r.create("acme", "order-1", 500)
			r.runUntil("UNKNOWN", r.isIn(op, ledger.Unknown), r.executor(r.store))
			r.runUntil("SUCCEEDED", func() bool {
				return r.get(op).State.Final()
			}, r.reconciler())
			got := r.get(op)
			if got.State != ledger.Succeeded || r.remote(op) != 1 {
				t.Fatalf("%s (%s) with %d remote objects; history %v", got.State, got.Reason, r.remote(op), r.history(op))
			}
			evs, err := r.store.Events(r.ctx, op.Tenant, op.ID)
			if err != nil {
				t.Fatal(err)
			}
			var replays, rejected int
			for _, e := range evs {
				if ev := evidence(t, e); ev["via"] == "same-key replay" {
					replays++
					if ev["status"] == 429.0 && e.To == ledger.Unknown {
						rejected++
					}
				}
			}
			if replays != 1 || rejected != 1 || evidence(t, evs[len(evs)-1])["via"] != "lookup" {
				t.Fatalf("want one replay, answered 429 and kept UNKNOWN, then a lookup; events %+v", evs)
			}
			if r.sim.Requests() != 2 {
				t.Fatalf("%d create requests, want the send and one replay", r.sim.Requests())
			}
		})
		t.Run("ReplayRateLimitedNoLookup", func(t *testing.T) {
			r := newRig(t, h, sim.Config{Class: "A"}, func(c *target.Contract) { c.Lookup = nil })
			r.sim.Script(sim.DropAfterCommit, sim.RateLimited)
			op := r.create("acme", "order-1", 500)
			r.runUntil("UNKNOWN", r.isIn(op, ledger.Unknown), r.executor(r.store))
			r.runUntil("resolved", func() bool {
				s := r.get(op).State
				return s.Final() || s == ledger.Escalated
			}, r.reconciler())
			got := r.get(op)
			if got.State != ledger.Escalated || r.remote(op) != 1 || !strings.Contains(got.Reason, "429") {
				t.Fatalf("%s (%s) with %d remote objects, want ESCALATED naming the 429", got.State, got.Reason, r.remote(op))
			}
		})
		// The first send's documented rejection still means what it says.
		t.Run("FirstSendRateLimited", func(t *testing.T) {
			r := newRig(t, h, sim.Config{Class: "A"}, nil)
			r.sim.Script(sim.RateLimited)
			op := r.create("acme", "order-1", 500)
			r.runUntil("FAILED_TERMINAL", r.isIn(op, ledger.FailedTerminal), r.executor(r.store))
			if r.remote(op) != 0 {
				t.Fatal("a rejected first send left an object")
			}
		})
	})
}

// evidence decodes an event's evidence (PostgreSQL and SQLite space JSON
// differently, so compare values, not text).
func evidence(t *testing.T, e ledger.Event) map[string]any {
	t.Helper()
	var ev map[string]any
	if err := json.Unmarshal(e.Evidence, &ev); err != nil {
		t.Fatalf("evidence %s: %v", e.Evidence, err)
	}
	return ev
}

// An unresolved operation is escalated on time: the backoff never
// schedules the next look past the deadline, so the round that escalates
// runs at the deadline, not a backoff (up to MaxBackoff) later. A fake
// clock drives the store and the reconciler; the lookups are real.
func TestSafety_EscalatedOnTime(t *testing.T) {
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "B"}, nil) // nothing is ever sent: lookups find nothing
		clk := ledgertest.NewClock()
		store := h.New(t, clk.Now)
		deadline := clk.Now().Add(10 * time.Minute)
		op, _, err := store.Create(r.ctx, ledger.NewOperation{Tenant: "acme", Type: "charge", IntentRef: "order-1",
			Target: r.c.Name, Payload: []byte(`{"amount":500,"currency":"EUR"}`), Deadline: &deadline, Bind: r.c.Bind})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := store.Claim(r.ctx, op.Tenant, op.ID, op.PayloadHash, time.Minute); err != nil {
			t.Fatal(err)
		}
		clk.Advance(time.Minute + time.Second) // the sender died: its lease expires
		if n, err := store.SweepExpired(r.ctx); err != nil || n != 1 {
			t.Fatalf("swept %d, %v", n, err)
		}
		rec := &reconciler.Reconciler{Store: store, Contracts: r.set, Client: r.client, Log: r.log, Now: clk.Now,
			MinBackoff: time.Second, MaxBackoff: 5 * time.Minute}
		for round := 1; ; round++ {
			leased, err := store.LeaseUnknown(r.ctx, 10, time.Minute)
			if err != nil || len(leased) != 1 {
				t.Fatalf("round %d at %s: leased %d, %v", round, clk.Now(), len(leased), err)
			}
			out := rec.Resolve(r.ctx, leased[0])
			if _, err := store.Record(r.ctx, out); err != nil {
				t.Fatal(err)
			}
			if out.To == ledger.Escalated {
				if late := clk.Now().Sub(deadline); late < 0 || late > time.Second || !strings.Contains(out.Reason, "past its deadline") {
					t.Fatalf("escalated %s after the deadline: %q", late, out.Reason)
				}
				return
			}
			if out.To != ledger.Unknown || out.NextAt == nil {
				t.Fatalf("round %d: %s, next %v", round, out.To, out.NextAt)
			}
			if out.NextAt.After(deadline) {
				t.Fatalf("round %d at %s scheduled the next look at %s, %s past the deadline",
					round, clk.Now().Sub(op.CreatedAt), out.NextAt.Sub(op.CreatedAt), out.NextAt.Sub(deadline))
			}
			clk.Advance(out.NextAt.Sub(clk.Now()))
		}
	})
}
