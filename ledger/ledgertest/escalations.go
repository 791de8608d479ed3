package ledgertest

import (
	"context"
	"testing"
	"time"

	"settle/ledger"
)

// RunEscalations checks ledger.EscalationStore on the stores h makes: one
// notice queued with every transition to ESCALATED, by any recording path
// and without a tenant callback, none for other states or stale verdicts;
// claims and their leases; delivery bookkeeping, giving up and retrying;
// and the digest record.
func RunEscalations(t *testing.T, h Harness) {
	t.Run("Enqueue", func(t *testing.T) { testEscalationEnqueue(t, h) })
	t.Run("ClaimAndMark", func(t *testing.T) { testEscalationClaim(t, h) })
	t.Run("GiveUpAndRetry", func(t *testing.T) { testEscalationGiveUp(t, h) })
	t.Run("Digests", func(t *testing.T) { testDigests(t, h) })
}

func (f *fixture) escalations() ledger.EscalationStore {
	f.t.Helper()
	es, ok := f.store.(ledger.EscalationStore)
	if !ok {
		f.t.Fatal("store does not implement ledger.EscalationStore")
	}
	return es
}

func (f *fixture) notices(op ledger.Operation) []ledger.Notification {
	f.t.Helper()
	ns, err := f.escalations().EscalationNotices(f.ctx, op.Tenant, op.ID)
	if err != nil {
		f.t.Fatalf("escalation notices: %v", err)
	}
	return ns
}

func testEscalationEnqueue(t *testing.T, h Harness) {
	t.Run("FromInFlightAndUnknown", func(t *testing.T) {
		f := setup(t, h)
		for _, op := range []ledger.Operation{
			f.record(f.claim("acme"), ledger.InFlight, ledger.Escalated),
			f.record(f.lease(f.unknown("globex")), ledger.Unknown, ledger.Escalated),
		} {
			ns := f.notices(op)
			if len(ns) != 1 {
				t.Fatalf("notices = %+v, want exactly one", ns)
			}
			n := ns[0]
			if n.Tenant != op.Tenant || n.OperationID != op.ID || n.State != ledger.Escalated || n.Fence != op.Fence ||
				n.Attempts != 0 || n.DeliveredAt != nil || !n.CreatedAt.Equal(op.UpdatedAt) ||
				!n.NextAttemptAt.Equal(op.UpdatedAt) || n.ID == 0 {
				t.Fatalf("notice = %+v for %+v", n, op)
			}
			// The tenant has no callback: no callback notification.
			if cbs := f.notifications(op); len(cbs) != 0 {
				t.Fatalf("callback notifications without a callback: %+v", cbs)
			}
		}
	})

	t.Run("NotForOtherStatesNorStale", func(t *testing.T) {
		f := setup(t, h)
		stale := f.claim("acme")
		o := outcome(stale, ledger.InFlight, ledger.Escalated)
		o.Fence--
		_, err := f.store.Record(f.ctx, o)
		wantCode(t, err, ledger.EStaleFence)
		for _, op := range []ledger.Operation{f.create("acme"), stale, f.inState("acme", ledger.Succeeded),
			f.inState("acme", ledger.FailedTerminal), f.record(f.claim("acme"), ledger.InFlight, ledger.Unknown)} {
			if ns := f.notices(f.get(op)); len(ns) != 0 {
				t.Fatalf("%s: %+v", f.get(op).State, ns)
			}
		}
	})

	t.Run("Batch", func(t *testing.T) {
		f := setup(t, h)
		esc, ok := f.claim("acme"), f.claim("acme")
		errs, err := f.store.RecordBatch(f.ctx, []ledger.Outcome{
			outcome(esc, ledger.InFlight, ledger.Escalated), outcome(ok, ledger.InFlight, ledger.Succeeded)})
		if err != nil || errs[0] != nil || errs[1] != nil {
			t.Fatalf("batch: %v %v", errs, err)
		}
		if ns := f.notices(esc); len(ns) != 1 {
			t.Fatalf("escalated in a batch: %+v", ns)
		}
		if ns := f.notices(ok); len(ns) != 0 {
			t.Fatalf("succeeded in a batch: %+v", ns)
		}
	})
}

func testEscalationClaim(t *testing.T, h Harness) {
	f := setup(t, h)
	es := f.escalations()
	a := f.notices(f.record(f.claim("acme"), ledger.InFlight, ledger.Escalated))[0]
	b := f.notices(f.record(f.claim("globex"), ledger.InFlight, ledger.Escalated))[0]
	first, err := es.ClaimEscalationNotices(f.ctx, 1, time.Minute)
	if err != nil || len(first) != 1 || first[0].ID != a.ID || first[0].Attempts != 1 ||
		!first[0].NextAttemptAt.Equal(f.clk.Now().Add(time.Minute)) {
		t.Fatalf("first claim = %+v, %v", first, err)
	}
	other := es
	if h.Sibling != nil {
		other = h.Sibling(t, f.store, f.clk.Now).(ledger.EscalationStore)
	}
	second, err := other.ClaimEscalationNotices(f.ctx, 10, time.Minute)
	if err != nil || len(second) != 1 || second[0].ID != b.ID {
		t.Fatalf("second claim = %+v, %v (a claimed notice must not be handed out twice)", second, err)
	}
	if none, _ := es.ClaimEscalationNotices(f.ctx, 10, time.Minute); len(none) != 0 {
		t.Fatalf("claimed under lease: %+v", none)
	}
	if err := es.MarkEscalationNoticeDelivered(f.ctx, a.ID, 204, f.clk.Now()); err != nil {
		t.Fatal(err)
	}
	// A late failure report does not undo the acknowledgement.
	if err := es.MarkEscalationNoticeFailed(f.ctx, a.ID, 500, "late", f.clk.Now()); err != nil {
		t.Fatal(err)
	}
	if err := es.MarkEscalationNoticeFailed(f.ctx, b.ID, 503, "unavailable", f.clk.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	f.clk.Advance(time.Second)
	again, err := es.ClaimEscalationNotices(f.ctx, 10, time.Minute)
	if err != nil || len(again) != 1 || again[0].ID != b.ID || again[0].Attempts != 2 ||
		again[0].LastStatus != 503 || again[0].LastError != "unavailable" {
		t.Fatalf("after the failure: %+v, %v", again, err)
	}
	if n := f.notices(ledger.Operation{Tenant: a.Tenant, ID: a.OperationID})[0]; n.DeliveredAt == nil || n.LastStatus != 204 {
		t.Fatalf("delivered notice: %+v", n)
	}
	wantCode(t, es.MarkEscalationNoticeDelivered(f.ctx, 1<<40, 200, f.clk.Now()), ledger.ENotFound)
	wantCode(t, es.MarkEscalationNoticeFailed(f.ctx, 1<<40, 500, "x", f.clk.Now()), ledger.ENotFound)
	_, err = es.ClaimEscalationNotices(f.ctx, 0, time.Minute)
	wantCode(t, err, ledger.EInvalid)
}

// A given-up notice is never claimed again and is listed, per tenant, until
// it is retried: then it is due with its attempts counted from zero. A
// give-up reported after delivery changes nothing.
func testEscalationGiveUp(t *testing.T, h Harness) {
	f := setup(t, h)
	es := f.escalations()
	n := f.notices(f.record(f.claim("acme"), ledger.InFlight, ledger.Escalated))[0]
	kept := f.notices(f.record(f.claim("acme"), ledger.InFlight, ledger.Escalated))[0]
	f.notices(f.record(f.claim("globex"), ledger.InFlight, ledger.Escalated))
	for range 2 {
		got, err := es.ClaimEscalationNotices(f.ctx, 10, time.Minute)
		if err != nil || len(got) != 3 {
			t.Fatalf("claim = %+v, %v", got, err)
		}
		for _, g := range got {
			if err := es.MarkEscalationNoticeFailed(f.ctx, g.ID, 500, "status 500", f.clk.Now()); err != nil {
				t.Fatal(err)
			}
		}
	}
	at := f.clk.Now()
	if err := es.GiveUpEscalationNotice(f.ctx, n.ID, 502, "endpoint answered 502", at); err != nil {
		t.Fatal(err)
	}
	f.clk.Advance(time.Second) // giving up twice keeps the first time
	if err := es.GiveUpEscalationNotice(f.ctx, n.ID, 502, "endpoint answered 502", f.clk.Now()); err != nil {
		t.Fatal(err)
	}
	wantCode(t, es.GiveUpEscalationNotice(f.ctx, 1<<40, 0, "x", at), ledger.ENotFound)
	f.clk.Advance(time.Hour)
	got, err := es.ClaimEscalationNotices(f.ctx, 10, time.Minute)
	if err != nil || len(got) != 2 || got[0].ID == n.ID || got[1].ID == n.ID {
		t.Fatalf("claim after give-up = %+v, %v", got, err)
	}
	g, err := es.GivenUpEscalationNotices(f.ctx, "acme", 5)
	if err != nil || g.Count != 1 || len(g.Latest) != 1 {
		t.Fatalf("given up = %+v, %v", g, err)
	}
	if l := g.Latest[0]; l.ID != n.ID || l.OperationID != n.OperationID || l.State != ledger.Escalated ||
		l.Attempts != 2 || l.LastStatus != 502 || l.LastError != "endpoint answered 502" ||
		l.GaveUpAt == nil || !l.GaveUpAt.Equal(at) || l.DeliveredAt != nil {
		t.Fatalf("given-up notice = %+v", l)
	}
	if g, err := es.GivenUpEscalationNotices(f.ctx, "globex", 5); err != nil || g.Count != 0 || len(g.Latest) != 0 {
		t.Fatalf("another tenant's given up = %+v, %v", g, err)
	}
	if err := es.MarkEscalationNoticeDelivered(f.ctx, kept.ID, 200, f.clk.Now()); err != nil {
		t.Fatal(err)
	}
	if err := es.GiveUpEscalationNotice(f.ctx, kept.ID, 500, "late", f.clk.Now()); err != nil {
		t.Fatal(err)
	}
	if g, _ := es.GivenUpEscalationNotices(f.ctx, "acme", 0); g.Count != 1 || len(g.Latest) != 0 {
		t.Fatalf("a delivered notice counted as given up, or limit 0 listed: %+v", g)
	}
	if k, err := es.RetryGivenUpEscalationNotices(f.ctx, "globex", f.clk.Now()); err != nil || k != 0 {
		t.Fatalf("retry globex = %d, %v", k, err)
	}
	f.wantRetryAction(ledger.ActionEscalationNoticeRetry, "globex", "0 queued again")
	f.clk.Advance(time.Hour)
	_, err = es.RetryGivenUpEscalationNotices(context.Background(), "acme", f.clk.Now())
	wantCode(t, err, ledger.EInvalid)
	if k, err := es.RetryGivenUpEscalationNotices(f.ctx, "acme", f.clk.Now()); err != nil || k != 1 {
		t.Fatalf("retry = %d, %v", k, err)
	}
	f.wantRetryAction(ledger.ActionEscalationNoticeRetry, "acme", "1 queued again")
	if g, _ := es.GivenUpEscalationNotices(f.ctx, "acme", 5); g.Count != 0 {
		t.Fatalf("given up after retry: %+v", g)
	}
	got, err = es.ClaimEscalationNotices(f.ctx, 10, time.Minute)
	var again *ledger.Notification
	for i := range got {
		if got[i].ID == n.ID {
			again = &got[i]
		}
	}
	if err != nil || again == nil || again.Attempts != 1 || again.GaveUpAt != nil {
		t.Fatalf("claim after retry = %+v, %v", got, err)
	}
}

func testDigests(t *testing.T, h Harness) {
	f := setup(t, h)
	es := f.escalations()
	if sent, err := es.DigestSent(f.ctx, "Payments team", "2026-12-01"); err != nil || sent {
		t.Fatalf("before: %v, %v", sent, err)
	}
	for range 2 { // recording again is not an error
		if err := es.RecordDigest(f.ctx, "Payments team", "2026-12-01", f.clk.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if sent, err := es.DigestSent(f.ctx, "Payments team", "2026-12-01"); err != nil || !sent {
		t.Fatalf("after: %v, %v", sent, err)
	}
	for _, other := range [][2]string{{"Payments team", "2026-12-02"}, {"Ledger team", "2026-12-01"}} {
		if sent, err := es.DigestSent(f.ctx, other[0], other[1]); err != nil || sent {
			t.Fatalf("%v: %v, %v", other, sent, err)
		}
	}
	wantCode(t, es.RecordDigest(f.ctx, "Payments team", "tomorrow", f.clk.Now()), ledger.EInvalid)
	wantCode(t, es.RecordDigest(f.ctx, "", "2026-12-01", f.clk.Now()), ledger.EInvalid)
	_, err := es.DigestSent(f.ctx, "Payments team", "tomorrow")
	wantCode(t, err, ledger.EInvalid)
}
