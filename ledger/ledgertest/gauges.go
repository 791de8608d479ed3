package ledgertest

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"settle/ledger"
)

// testGauges checks the metrics collector's one statement: live states by
// tenant, target and state, the due UNKNOWN ones, the oldest escalation,
// and the open quarantine by scope tenant and target.
func testGauges(t *testing.T, h Harness) {
	f := setup(t, h)
	gs, ok := f.store.(ledger.GaugeStore)
	if !ok {
		t.Fatal("store does not implement ledger.GaugeStore")
	}
	in, ok := f.store.(ledger.InboxStore)
	if !ok {
		t.Fatal("store does not implement ledger.InboxStore")
	}
	// globex: one UNKNOWN looked at and due in an hour, one due now.
	notDue := f.unknown("globex")
	later := f.clk.Now().Add(time.Hour)
	back := outcome(f.lease(notDue), ledger.Unknown, ledger.Unknown)
	back.Actor, back.NextAt = ledger.ActorReconciler, &later
	if _, err := f.store.Record(f.ctx, back); err != nil {
		t.Fatal(err)
	}
	f.unknown("globex")
	// acme: one UNKNOWN past its deadline, in the escalation queue.
	n := f.newOp("acme")
	deadline := f.clk.Now().Add(30 * time.Second)
	n.Deadline = &deadline
	past, _, err := f.store.Create(f.ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	f.unknown("acme") // advances the clock past past's deadline
	if past = f.get(past); past.State != ledger.Prepared {
		t.Fatalf("past is %s", past.State)
	}
	held, err := f.store.Claim(f.ctx, "acme", past.ID, past.PayloadHash, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	f.record(held, ledger.InFlight, ledger.Unknown)
	f.inState("acme", ledger.Succeeded) // never counted: not live
	f.inState("acme", ledger.FailedTerminal)
	f.createIn("acme", "payments", ledger.Prepared)
	f.createIn("acme", "payments", ledger.Prepared)
	f.createIn("acme", "shipping", ledger.Prepared)
	escalatedAt := f.clk.Now()
	f.inState("acme", ledger.Escalated)
	f.clk.Advance(time.Minute)
	f.inState("acme", ledger.Escalated)
	f.inState("acme", ledger.InFlight)
	if _, err := in.Quarantine(f.ctx, ledger.QuarantineItem{Target: "payments", Reason: "no tenant", EventID: "evt_1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Quarantine(f.ctx, ledger.QuarantineItem{Target: "payments", Reason: "contradicts", OperationID: "x", OpTenant: "acme"}); err != nil {
		t.Fatal(err)
	}
	closed, err := in.Quarantine(f.ctx, ledger.QuarantineItem{Target: "payments", Reason: "contradicts", OperationID: "y", OpTenant: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	if err := in.ResolveQuarantine(f.ctx, "acme", closed, "reviewed"); err != nil {
		t.Fatal(err)
	}

	g, err := gs.Gauges(f.ctx, f.clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range g.States {
		got = append(got, strings.Join([]string{s.Tenant, s.Target, string(s.State), strconv.Itoa(s.Count), strconv.Itoa(s.Due), strconv.Itoa(s.Overdue)}, "/"))
		if s.State == ledger.Escalated && !s.Oldest.Equal(escalatedAt) {
			t.Errorf("oldest escalation %v, want %v", s.Oldest, escalatedAt)
		}
	}
	slices.Sort(got)
	want := []string{
		"acme/payments/ESCALATED/2/0/0",
		"acme/payments/IN_FLIGHT/1/0/0",
		"acme/payments/PREPARED/2/0/0",
		"acme/payments/UNKNOWN/2/2/1",
		"acme/shipping/PREPARED/1/0/0",
		"globex/payments/UNKNOWN/2/1/0",
	}
	if !slices.Equal(got, want) {
		t.Errorf("states\n got %q\nwant %q", got, want)
	}
	var q []string
	for _, x := range g.Quarantine {
		q = append(q, x.Tenant+"/"+x.Target+"/"+strconv.Itoa(x.Count))
	}
	slices.Sort(q)
	if want := []string{"/payments/1", "acme/payments/1"}; !slices.Equal(q, want) {
		t.Errorf("quarantine %q, want %q", q, want)
	}
}
