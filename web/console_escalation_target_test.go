package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"settle/ledger"
	"settle/target"
	"settle/target/sim"
	"settle/web"
)

// sentAndEscalated registers a charge bound the way the API binds it,
// sends it to the simulator once (its answer "lost"), and escalates it.
func sentAndEscalated(t *testing.T, c *console, ct *target.Contract, intent string, window time.Duration) ledger.Operation {
	t.Helper()
	ctx := context.Background()
	op, _, err := c.store.Create(ctx, ledger.NewOperation{Tenant: "acme", Type: "charge", IntentRef: intent,
		Target: "payments", Payload: []byte(`{"amount":700,"currency":"EUR","metadata":{"order":"` + intent + `"}}`),
		RetryWindow: window, Bind: ct.Bind})
	if err != nil {
		t.Fatal(err)
	}
	held, err := c.store.Claim(ctx, "acme", op.ID, op.PayloadHash, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if a := target.NewClient(target.ClientOptions{}).Create(ctx, ct, "acme", held.Payload, held.RemoteKey, ""); a.Status/100 != 2 {
		t.Fatalf("send: %+v", a)
	}
	op, err = c.store.Record(ctx, ledger.Outcome{Tenant: "acme", OperationID: op.ID, Fence: held.Fence,
		From: ledger.InFlight, To: ledger.Escalated, Actor: ledger.ActorExecutor, Reason: "answer lost"})
	if err != nil {
		t.Fatal(err)
	}
	return op
}

// With a class A contract: "confirm succeeded" is checked by a lookup
// before it is accepted, a replay is offered while the window (less the
// timeout and margin) is open, and its approval hands the operation back
// to the reconciler; with the window closed no replay is offered or
// accepted.
func TestConsole_EscalationChecksWithTheTarget(t *testing.T) {
	t.Parallel()
	srv, err := sim.Start(sim.Config{Class: "A"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	set, err := target.Parse("sim.yaml", srv.Contract("payments"))
	if err != nil {
		t.Fatal(err)
	}
	ct, _ := set.Get("payments")
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{Contracts: set})
		olu, bea := c.as("owner"), c.as("owner-b")
		op := sentAndEscalated(t, c, ct, "order-"+t.Name()[len(t.Name())-3:], ct.RetryWindow())
		var objectID string
		for _, o := range srv.Sim().Objects() {
			if o.Reference == op.RemoteKey {
				objectID = o.ID
			}
		}
		if objectID == "" {
			t.Fatal("the simulator holds no object for the operation")
		}

		d := olu.get(escPath(op))
		if !testid(d.body, "answer-replay-text", "Yes: ") || !strings.Contains(string(d.body), `data-testid="kind-replay"`) {
			t.Fatalf("no replay offered inside the window: %s", d.body)
		}
		propose := func(b *browser, form url.Values) response {
			form.Set(web.CSRFField, b.csrfCookie())
			return b.do(http.MethodPost, escPath(op)+"/propose", form)
		}
		wrong := propose(olu, url.Values{"kind": {"confirm_succeeded"}, "remote_ref": {"ch_nope"}, "reason": {"I think so"}})
		if wrong.status != http.StatusUnprocessableEntity || !strings.Contains(string(wrong.body), "holds no object ch_nope") {
			t.Fatalf("an object the target does not hold was accepted: %d %s", wrong.status, wrong.body)
		}
		if r := propose(olu, url.Values{"kind": {"confirm_succeeded"}, "remote_ref": {objectID},
			"reason": {"the lookup shows it"}}); r.status != http.StatusSeeOther {
			t.Fatalf("the target's own object was refused: %d %s", r.status, r.body)
		}
		props, _ := c.store.OpenResolutions(context.Background(), []string{"acme"}, false)
		if len(props) != 1 {
			t.Fatalf("open: %+v", props)
		}
		reject := url.Values{"proposal": {itoa(props[0].ID)}, "reason": {"rather replay"}, web.CSRFField: {olu.csrfCookie()}}
		if r := olu.do(http.MethodPost, escPath(op)+"/reject", reject); r.status != http.StatusSeeOther {
			t.Fatalf("withdraw: %d", r.status)
		}
		if r := propose(olu, url.Values{"kind": {"replay"}, "reason": {"nothing conclusive; the key is still kept"}}); r.status != http.StatusSeeOther {
			t.Fatalf("propose replay: %d %s", r.status, r.body)
		}
		props, _ = c.store.OpenResolutions(context.Background(), []string{"acme"}, false)
		approve := url.Values{"proposal": {itoa(props[0].ID)}, web.CSRFField: {bea.csrfCookie()}}
		if r := bea.do(http.MethodPost, escPath(op)+"/approve", approve); r.status != http.StatusSeeOther {
			t.Fatalf("approve replay: %d %s", r.status, r.body)
		}
		got, _ := c.store.Get(context.Background(), "acme", op.ID)
		if got.State != ledger.Unknown || got.Reason != ledger.ReasonReplayAuthorised {
			t.Fatalf("after the approved replay: %s %q", got.State, got.Reason)
		}

		// A window too short for the timeout and the margin: no replay.
		closed := sentAndEscalated(t, c, ct, "short-"+t.Name()[len(t.Name())-3:], time.Second)
		d = olu.get(escPath(closed))
		if !testid(d.body, "answer-replay-text", "No: the window closed") || strings.Contains(string(d.body), `data-testid="kind-replay"`) {
			t.Fatalf("a replay offered outside the window: %s", d.body)
		}
		form := url.Values{"kind": {"replay"}, "reason": {"try"}, web.CSRFField: {olu.csrfCookie()}}
		if r := olu.do(http.MethodPost, escPath(closed)+"/propose", form); r.status != http.StatusUnprocessableEntity {
			t.Fatalf("a replay proposed outside the window: %d", r.status)
		}
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
