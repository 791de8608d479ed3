package ledgertest

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"settle/ledger"
)

// FiguresSpan bounds how far SeedFigures moves its clock: start the clock
// this long before the moment the history should end at the latest.
const FiguresSpan = 7*24*time.Hour + 4*time.Hour

// SeedFigures gives tenant a history in which every manager figure has
// something to count, written through s's own methods at clk's times (s
// must read time from clk), so that the figures, the rollups and the
// event log agree as they do in production. Over eight days from clk's
// time, operations of the targets "payments" and "refunds" enter UNKNOWN
// on most days and are resolved automatically (SUCCEEDED, FAILED_TERMINAL)
// after whole-second times of different lengths, or escalated, or stay
// open; people resolve three escalations (two owners: confirm not applied
// for one escalated straight from IN_FLIGHT, confirm succeeded, and a
// same-key replay that then succeeds) and leave two open, one of them
// escalated straight from IN_FLIGHT; three payloads conflict with earlier
// intents; the auditor finds two duplicates and a loss (which is not a
// duplicate). The first day's episode and a payload conflict lie a week
// before the last day, and one episode spans two days, so that a window
// can leave them out or cut them in two. Nothing happens after
// clk's time plus FiguresSpan, and clk is left at the last event.
//
// It fails t when a store method refuses a step: the history is what
// every store must accept.
func SeedFigures(t testing.TB, s ledger.Store, clk *Clock, tenant string) {
	t.Helper()
	audit, ok := s.(ledger.AuditStore)
	if !ok {
		t.Fatal("SeedFigures: the store does not implement ledger.AuditStore")
	}
	h := &history{t: t, ctx: context.Background(), s: s, audit: audit, clk: clk, tenant: tenant, begin: clk.Now()}

	h.at(0, 10*time.Minute)
	a := h.unknown("payments")
	h.resolve(a, 2*time.Minute, ledger.Succeeded)
	h.conflict(a)

	h.at(1, 0)
	n := h.unknown("payments") // resolved on the next day

	h.at(2, 30*time.Minute)
	h.resolve(n, 0, ledger.Succeeded)
	b := h.unknown("payments")
	h.resolve(b, 90*time.Second, ledger.Succeeded)
	h.resolve(h.unknown("refunds"), 45*time.Second, ledger.Succeeded)

	h.at(3, time.Hour)
	h.resolve(h.unknown("payments"), 7*time.Minute+30*time.Second, ledger.FailedTerminal)
	h.resolve(h.unknown("refunds"), time.Hour, ledger.Escalated) // the oldest open escalation

	h.at(4, 15*time.Minute)
	h.conflict(b)
	f := h.unknown("payments")
	h.resolve(f, 3*time.Minute, ledger.Succeeded)
	h.unknown("payments") // stays UNKNOWN
	// Escalated unsent, confirmed not applied by two owners 10 minutes on.
	h.byPeople(h.escalated("payments"), 10*time.Minute, ledger.Resolution{To: ledger.FailedTerminal})

	h.at(5, 2*time.Hour)
	h.resolve(h.unknown("refunds"), 20*time.Minute, ledger.FailedTerminal)
	h.escalated("payments")
	h.finding(b, ledger.FindingDuplicate)
	h.finding(f, ledger.FindingLoss)

	h.at(6, 40*time.Minute)
	e := h.resolve(h.unknown("payments"), 2*time.Hour+5*time.Minute, ledger.Escalated)
	h.byPeople(e, 30*time.Minute, ledger.Resolution{To: ledger.Succeeded, RemoteRef: "ch_people_1"})
	k := h.unknown("refunds")
	h.resolve(k, 10*time.Second, ledger.Succeeded)
	h.conflict(k)
	h.finding(k, ledger.FindingDuplicate)

	h.at(7, time.Hour)
	h.unknown("payments") // stays UNKNOWN
	h.resolve(h.unknown("refunds"), 30*time.Minute, ledger.Succeeded)
	h.resolve(h.unknown("payments"), 4*time.Minute, ledger.Succeeded)
	// Escalated after 5 minutes, a same-key replay approved 15 minutes on,
	// and the replay's answer 2 minutes later.
	r := h.resolve(h.unknown("refunds"), 5*time.Minute, ledger.Escalated)
	r = h.byPeople(r, 15*time.Minute, ledger.Resolution{Kind: ledger.KindReplay, To: ledger.KindTo(ledger.KindReplay)})
	h.resolve(r, 2*time.Minute, ledger.Succeeded)
	if end := h.begin.Add(FiguresSpan); clk.Now().After(end) {
		t.Fatalf("SeedFigures: the history ends at %s, after %s", clk.Now(), end)
	}
}

// history writes SeedFigures' steps.
type history struct {
	t      testing.TB
	ctx    context.Context
	s      ledger.Store
	audit  ledger.AuditStore
	clk    *Clock
	tenant string
	begin  time.Time
	seq    int
}

// at moves the clock to offset into day (counted from the history's
// beginning); the steps are in order, so the clock never goes back.
func (h *history) at(day int, offset time.Duration) {
	h.t.Helper()
	d := h.begin.Add(time.Duration(day)*24*time.Hour + offset).Sub(h.clk.Now())
	if d < 0 {
		h.t.Fatalf("SeedFigures: day %d at %s is in the history's past", day, offset)
	}
	h.clk.Advance(d)
}

// op creates an operation of target with a fresh intent.
func (h *history) op(target string) ledger.Operation {
	h.t.Helper()
	h.seq++
	op, _, err := h.s.Create(h.ctx, ledger.NewOperation{Tenant: h.tenant, Type: "charge",
		IntentRef: fmt.Sprintf("fig-%d", h.seq), Target: target, RetryWindow: 24 * time.Hour,
		Payload: fmt.Appendf(nil, `{"amount": %d, "currency": "EUR"}`, 100+h.seq)})
	if err != nil {
		h.t.Fatalf("SeedFigures: create: %v", err)
	}
	if op, err = h.s.Claim(h.ctx, op.Tenant, op.ID, op.PayloadHash, time.Minute); err != nil {
		h.t.Fatalf("SeedFigures: claim: %v", err)
	}
	return op
}

func (h *history) record(op ledger.Operation, from, to ledger.State) ledger.Operation {
	h.t.Helper()
	got, err := h.s.Record(h.ctx, outcome(op, from, to))
	if err != nil {
		h.t.Fatalf("SeedFigures: record %s → %s: %v", from, to, err)
	}
	return got
}

// unknown sends an operation of target whose answer is lost: it enters
// UNKNOWN now.
func (h *history) unknown(target string) ledger.Operation {
	h.t.Helper()
	return h.record(h.op(target), ledger.InFlight, ledger.Unknown)
}

// resolve ends op's UNKNOWN episode in to after the time it took.
func (h *history) resolve(op ledger.Operation, took time.Duration, to ledger.State) ledger.Operation {
	h.t.Helper()
	h.clk.Advance(took)
	return h.record(op, ledger.Unknown, to)
}

// escalated sends an operation of target that is escalated without
// UNKNOWN.
func (h *history) escalated(target string) ledger.Operation {
	h.t.Helper()
	return h.record(h.op(target), ledger.InFlight, ledger.Escalated)
}

// byPeople has one owner propose r for the ESCALATED op and a second
// approve it after took.
func (h *history) byPeople(op ledger.Operation, took time.Duration, r ledger.Resolution) ledger.Operation {
	h.t.Helper()
	rs, ok := h.s.(ledger.ResolutionStore)
	if !ok {
		h.t.Fatal("SeedFigures: the store does not implement ledger.ResolutionStore")
	}
	owner := func(name string) context.Context {
		return ledger.NewContextWithActor(h.ctx, ledger.Actor{Subject: "cli:" + name, Name: name, Role: "owner", RequestID: "req-" + name})
	}
	r.Tenant, r.OperationID, r.Reason = op.Tenant, op.ID, "checked at the target"
	p, err := rs.Propose(owner("ada"), r)
	if err != nil {
		h.t.Fatalf("SeedFigures: propose %s: %v", r.Kind, err)
	}
	h.clk.Advance(took)
	got, err := rs.Approve(owner("grace"), op.Tenant, p.ID)
	if err != nil {
		h.t.Fatalf("SeedFigures: approve %s: %v", r.Kind, err)
	}
	return got
}

// conflict asks for op's intent again with another payload, which the
// store refuses and counts.
func (h *history) conflict(op ledger.Operation) {
	h.t.Helper()
	_, _, err := h.s.Create(h.ctx, ledger.NewOperation{Tenant: op.Tenant, Type: op.Type, IntentRef: op.IntentRef,
		Target: op.Target, RetryWindow: 24 * time.Hour, Payload: []byte(`{"amount": 1, "currency": "USD"}`)})
	if ledger.ErrorCode(err) != ledger.EPayloadConflict {
		h.t.Fatalf("SeedFigures: a second payload for %s: %v, want a payload conflict", op.IntentRef, err)
	}
}

// finding records what the auditor found about op.
func (h *history) finding(op ledger.Operation, kind ledger.FindingKind) {
	h.t.Helper()
	created, err := h.audit.RecordFinding(h.ctx, ledger.Finding{Tenant: op.Tenant, OperationID: op.ID, Kind: kind,
		RemoteIDs: []string{"obj_" + op.ID[:8], "obj_" + op.ID[9:13]}, Escalated: kind != ledger.FindingDuplicate})
	if err != nil || !created {
		h.t.Fatalf("SeedFigures: %s finding: created=%v, %v", kind, created, err)
	}
}

// testSeedFigures checks SeedFigures' history on every store: the figures
// of the whole history are the ones its steps spell out, by hand, read raw
// (a window of moments) and from the rollups (a window of whole days),
// so that the tests built on it compare pages and exports over numbers
// that are known, not only equal.
func testSeedFigures(t *testing.T, h Harness) {
	f := setup(t, h)
	src, ok := f.store.(ledger.FigureSource)
	if !ok {
		t.Fatal("store does not implement ledger.FigureSource")
	}
	begin := f.clk.Now() // 2030-01-02 03:04:05: every step of day k is on 2030-01-02 + k
	SeedFigures(t, f.store, f.clk, "acme")
	day := func(k int) string { return begin.AddDate(0, 0, k).Format(time.DateOnly) }
	at := func(k int, d time.Duration) *time.Time { t := begin.AddDate(0, 0, k).Add(d); return &t }
	m := func(n int, median, worst time.Duration) ledger.Measure {
		return ledger.Measure{Count: n, Median: median, Worst: worst}
	}
	oldest := *at(3, 2*time.Hour+7*time.Minute+30*time.Second)
	want := ledger.TenantFigures{Tenant: "acme",
		Targets: []ledger.TargetFigures{
			{Target: "payments",
				StartedPerDay: map[string]int{day(0): 1, day(1): 1, day(2): 1, day(3): 1, day(4): 3, day(5): 1, day(6): 1, day(7): 2},
				// 90s, 2m, 3m, 4m, 7m30s, 24h30m (across two days)
				Automatic: m(6, 3*time.Minute+30*time.Second, 24*time.Hour+30*time.Minute),
				// escalated unsent, failed 10m on; escalated after 2h5m, succeeded 30m on
				ByPeople:   m(2, (10*time.Minute+2*time.Hour+35*time.Minute)/2, 2*time.Hour+35*time.Minute),
				Escalation: m(2, 20*time.Minute, 30*time.Minute),
				FinalPerDay: map[string]ledger.Measure{day(0): m(1, 2*time.Minute, 2*time.Minute),
					day(2): m(2, (90*time.Second+24*time.Hour+30*time.Minute)/2, 24*time.Hour+30*time.Minute),
					day(3): m(1, 7*time.Minute+30*time.Second, 7*time.Minute+30*time.Second),
					day(4): m(2, 6*time.Minute+30*time.Second, 10*time.Minute),
					day(6): m(1, 2*time.Hour+35*time.Minute, 2*time.Hour+35*time.Minute),
					day(7): m(1, 4*time.Minute, 4*time.Minute)},
				Escalated: 3, EscalatedPerDay: map[string]int{day(4): 1, day(5): 1, day(6): 1},
				OpenEscalations: 1, OldestEscalation: at(5, 2*time.Hour+20*time.Minute)},
			{Target: "refunds",
				StartedPerDay: map[string]int{day(2): 1, day(3): 1, day(5): 1, day(6): 1, day(7): 2},
				// 10s, 45s, 20m, 30m
				Automatic: m(4, 10*time.Minute+22*time.Second+500*time.Millisecond, 30*time.Minute),
				// escalated after 5m, replay approved 15m on, succeeded 2m later
				ByPeople:   m(1, 22*time.Minute, 22*time.Minute),
				Escalation: m(1, 17*time.Minute, 17*time.Minute),
				FinalPerDay: map[string]ledger.Measure{day(2): m(1, 45*time.Second, 45*time.Second),
					day(5): m(1, 20*time.Minute, 20*time.Minute), day(6): m(1, 10*time.Second, 10*time.Second),
					day(7): m(2, 26*time.Minute, 30*time.Minute)},
				Escalated: 2, EscalatedPerDay: map[string]int{day(3): 1, day(7): 1},
				OpenEscalations: 1, OldestEscalation: &oldest},
		},
		OpenEscalations: 2, OldestEscalation: &oldest, PayloadConflicts: 3, Duplicates: 2}
	first := begin.Truncate(24 * time.Hour)
	for _, w := range []ledger.Window{
		{Since: begin, Until: begin.Add(FiguresSpan)},
		{Since: first, Until: first.AddDate(0, 0, 8)},
	} {
		got, err := ledger.Figures(f.ctx, src, "acme", w)
		if err != nil {
			t.Fatal(err)
		}
		want.Since, want.Until = w.Since, w.Until
		// Times compared as instants (the stores' locations differ).
		utc := func(p **time.Time) {
			if *p != nil {
				u := (*p).UTC()
				*p = &u
			}
		}
		utc(&got.OldestEscalation)
		for i := range got.Targets {
			utc(&got.Targets[i].OldestEscalation)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%v: figures\n%+v\nwant\n%+v", w, got, want)
		}
	}
}
