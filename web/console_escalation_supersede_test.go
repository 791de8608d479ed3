package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/metrics"
	"settle/target"
	"settle/target/sim"
	"settle/web"
)

// simContract starts a simulator of class and returns its payments contract.
func simContract(t *testing.T, class string) (*sim.Server, *target.Set, *target.Contract) {
	t.Helper()
	srv, err := sim.Start(sim.Config{Class: class})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	// The simulator rejects nothing late; its contract says so. Here it
	// documents that it does, so that absence can be proven once the
	// deadline has passed.
	text := strings.Replace(string(srv.Contract("payments")), "late_requests_rejected: false", "late_requests_rejected: true", 1)
	set, err := target.Parse("sim.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	ct, _ := set.Get("payments")
	return srv, set, ct
}

// unsentAndEscalated registers a charge bound the way the API binds it —
// its deadline and same-key window a minute away — and escalates it
// without sending it: the target holds nothing for it.
func unsentAndEscalated(t *testing.T, c *console, ct *target.Contract, intent string) ledger.Operation {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(time.Minute)
	op, _, err := c.store.Create(ctx, ledger.NewOperation{Tenant: "acme", Type: "charge", IntentRef: intent,
		Target: "payments", Payload: []byte(`{"amount":900,"currency":"EUR"}`), RetryWindow: time.Minute,
		Deadline: &deadline, Bind: ct.Bind})
	if err != nil {
		t.Fatal(err)
	}
	held, err := c.store.Claim(ctx, "acme", op.ID, op.PayloadHash, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	op, err = c.store.Record(ctx, ledger.Outcome{Tenant: "acme", OperationID: op.ID, Fence: held.Fence,
		From: ledger.InFlight, To: ledger.Escalated, Actor: ledger.ActorExecutor, Reason: "connection reset"})
	if err != nil {
		t.Fatal(err)
	}
	return op
}

// Supersede is offered only when the contract has a lookup, accepted only
// when the lookup finds nothing under the operation's reference, approved
// only by a second owner, and its successor is found by its intent.
func TestConsole_EscalationSupersede(t *testing.T) {
	t.Parallel()
	srv, set, ct := simContract(t, "A")
	_, setD, ctD := simContract(t, "D")
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		clk := ledgertest.NewClockAt(time.Now())
		reg := prometheus.NewRegistry()
		c := newConsole(t, counted(open(t), reg, metrics.Options{}), web.Config{Contracts: set, Now: clk.Now})
		olu, bea, sam := c.as("owner"), c.as("owner-b"), c.as("support")
		suffix := t.Name()[len(t.Name())-3:]
		propose := func(b *browser, op ledger.Operation) response {
			form := url.Values{"kind": {"supersede"}, "reason": {"the lookup finds nothing"}, web.CSRFField: {b.csrfCookie()}}
			return b.do(http.MethodPost, escPath(op)+"/propose", form)
		}

		// No deadline: a late request can never be ruled out, so supersede
		// is not offered, with why, and refused if posted.
		sent := sentAndEscalated(t, c, ct, "sup-sent-"+suffix, ct.RetryWindow())
		if d := olu.get(escPath(sent)); strings.Contains(string(d.body), `data-testid="kind-supersede"`) ||
			!testid(d.body, "no-supersede", "Supersede is not offered: this operation has no deadline") {
			t.Fatalf("supersede offered without a deadline: %s", d.body)
		}
		if r := propose(olu, sent); r.status != http.StatusUnprocessableEntity || !strings.Contains(string(r.body), "no deadline") {
			t.Fatalf("supersede without a deadline: %d %s", r.status, r.body)
		}

		op := unsentAndEscalated(t, c, ct, "sup-"+suffix)
		// Nothing found, but before the deadline a late request could still
		// commit, and a same-key replay is still possible: not proven.
		if r := propose(olu, op); r.status != http.StatusUnprocessableEntity || !strings.Contains(string(r.body), "absence is not yet proven") {
			t.Fatalf("supersede before absence is proven: %d %s", r.status, r.body)
		}
		clk.Advance(5 * time.Minute) // past the deadline and the window
		if r := propose(olu, op); r.status != http.StatusSeeOther {
			t.Fatalf("propose supersede: %d %s", r.status, r.body)
		}
		props, _ := c.store.OpenResolutions(context.Background(), []string{"acme"}, false)
		var id int64
		for _, p := range props {
			if p.OperationID == op.ID && p.Kind == ledger.KindSupersede {
				id = p.ID
			}
		}
		if id == 0 {
			t.Fatalf("no open supersede proposal: %+v", props)
		}
		approve := func(b *browser) response {
			return b.do(http.MethodPost, escPath(op)+"/approve", url.Values{"proposal": {itoa(id)}, web.CSRFField: {b.csrfCookie()}})
		}
		if r := approve(olu); r.status != http.StatusForbidden {
			t.Fatalf("the proposer approved their own supersede: %d", r.status)
		}
		if r := approve(bea); r.status != http.StatusSeeOther {
			t.Fatalf("second owner's approval: %d %s", r.status, r.body)
		}
		old, _ := c.store.Get(context.Background(), "acme", op.ID)
		if old.State != ledger.FailedTerminal {
			t.Fatalf("superseded operation is %s", old.State)
		}
		if n := resolvedByHand(t, reg, ledger.FailedTerminal); n != 1 {
			t.Fatalf("settle_transitions_total{from=ESCALATED,to=FAILED_TERMINAL} = %v, want 1", n)
		}
		next, err := c.store.GetByIntent(context.Background(), "acme", "charge", "sup-"+suffix+"~s1")
		if err != nil || next.State != ledger.Prepared || next.RemoteKey == op.RemoteKey {
			t.Fatalf("successor: %+v %v", next, err)
		}
		if ref, _ := ct.References(next.Payload); ref != next.RemoteKey {
			t.Fatalf("successor's payload carries %q, not its own key %q", ref, next.RemoteKey)
		}
		for _, o := range srv.Sim().Objects() {
			if o.Reference == op.RemoteKey || o.Reference == next.RemoteKey {
				t.Fatalf("the approval sent something: object %+v", o)
			}
		}
		list := sam.get("/operations?q=" + url.QueryEscape(next.IntentRef))
		if list.status != http.StatusSeeOther || !strings.Contains(list.header.Get("Location"), next.ID) {
			t.Fatalf("the successor is not found by its intent: %d %s", list.status, list.body)
		}

		// No lookup: not offered, with the reason, and refused if posted.
		cd := newConsole(t, open(t), web.Config{Contracts: setD})
		od := cd.as("owner")
		nolookup := unsentAndEscalated(t, cd, ctD, "sup-d-"+suffix)
		d := od.get(escPath(nolookup))
		if strings.Contains(string(d.body), `data-testid="kind-supersede"`) || !testid(d.body, "no-supersede", "Supersede is not offered") {
			t.Fatalf("supersede offered without a lookup: %s", d.body)
		}
		if r := propose(od, nolookup); r.status != http.StatusUnprocessableEntity {
			t.Fatalf("supersede proposed without a lookup: %d", r.status)
		}
	})
}
