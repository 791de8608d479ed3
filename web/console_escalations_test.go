package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"settle/ledger"
	"settle/metrics"
	"settle/target"
	"settle/web"
)

// Two owners work an escalation: Olu proposes "confirm succeeded", cannot
// approve it (no button, and a forged approval is refused), Bea approves,
// the operation is Confirmed and its timeline names both with their role,
// reason and request id.
func TestConsole_EscalationTwoOwners(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		// No contract for payments: nothing can be replayed or looked up,
		// so the page says so and a confirmation is taken on the person's
		// word, for another owner to approve.
		reg := prometheus.NewRegistry()
		c := newConsole(t, counted(open(t), reg, metrics.Options{}), web.Config{Contracts: noContracts{}, Metrics: reg})
		op := c.escalated("acme")
		olu, bea := c.as("owner"), c.as("owner-b")

		q := olu.get("/escalations")
		if q.status != http.StatusOK || !strings.Contains(string(q.body), `data-operation-id="`+op.ID+`"`) ||
			!testid(q.body, "row-reason", "the remote object does not match") {
			t.Fatalf("queue: %d %s", q.status, q.body)
		}
		d := olu.get(escPath(op))
		for _, want := range [][2]string{{"answer-said-text", "Escalated to Payments team, "},
			{"answer-match-text", "No. These fields differ from the approved request: amount."},
			{"answer-replay-text", "Not known: no contract"}, {"answer-approver-text", "Another owner of payments"}} {
			if !testid(d.body, want[0], want[1]) {
				t.Fatalf("detail lacks %s %q: %s", want[0], want[1], d.body)
			}
		}
		if !testid(d.body, "story-link", "The operation's story") || strings.Contains(string(d.body), `data-testid="kind-replay"`) {
			t.Fatalf("detail: story link, and no replay without a contract: %s", d.body)
		}

		propose := url.Values{"kind": {"confirm_succeeded"}, "remote_ref": {"ch_77"},
			"reason": {"the provider's dashboard shows ch_77 for this order"}}
		if r := olu.do(http.MethodPost, escPath(op)+"/propose", propose); r.status != http.StatusForbidden {
			t.Fatalf("a proposal without a CSRF token: %d", r.status)
		}
		noReason := url.Values{"kind": {"confirm_succeeded"}, "remote_ref": {"ch_77"}, web.CSRFField: {olu.csrfCookie()}}
		if r := olu.do(http.MethodPost, escPath(op)+"/propose", noReason); r.status != http.StatusUnprocessableEntity {
			t.Fatalf("a proposal without a reason: %d", r.status)
		}
		propose.Set(web.CSRFField, olu.csrfCookie())
		if r := olu.do(http.MethodPost, escPath(op)+"/propose", propose); r.status != http.StatusSeeOther {
			t.Fatalf("propose: %d %s", r.status, r.body)
		}
		props, err := c.store.OpenResolutions(context.Background(), []string{"acme"}, false)
		if err != nil || len(props) != 1 || props[0].ProposedBy != "demo:olu" || props[0].RemoteRef != "ch_77" {
			t.Fatalf("open proposals: %+v %v", props, err)
		}
		id := fmt.Sprint(props[0].ID)

		mine := olu.get(escPath(op))
		if strings.Contains(string(mine.body), `data-testid="approve"`) || !testid(mine.body, "awaiting-other", "Waiting for another owner") {
			t.Fatalf("the proposer is offered an approval: %s", mine.body)
		}
		forged := url.Values{"proposal": {id}, web.CSRFField: {olu.csrfCookie()}}
		if r := olu.do(http.MethodPost, escPath(op)+"/approve", forged); r.status != http.StatusForbidden {
			t.Fatalf("the proposer approved their own proposal: %d", r.status)
		}
		if got, _ := c.store.Get(context.Background(), "acme", op.ID); got.State != ledger.Escalated {
			t.Fatalf("after a refused approval: %s", got.State)
		}
		if n := resolvedByHand(t, reg, ledger.Succeeded); n != 0 {
			t.Fatalf("a refused approval counted: %v", n)
		}
		if p := olu.get("/escalations/proposals"); !strings.Contains(string(p.body), `data-testid="proposals-mine"`) {
			t.Fatalf("the proposer's proposals: %s", p.body)
		}
		if p := bea.get("/escalations/proposals"); !strings.Contains(string(p.body), `data-testid="proposals-awaiting"`) {
			t.Fatalf("the second owner's proposals: %s", p.body)
		}
		if d := bea.get(escPath(op)); !strings.Contains(string(d.body), `data-testid="approve"`) {
			t.Fatalf("the second owner has no approve button: %s", d.body)
		}
		if d := bea.get(escPath(op)); !testid(d.body, "open-unverifiable", "settle cannot check this object id") ||
			!strings.Contains(string(d.body), `data-testid="approve-checked"`) {
			t.Fatalf("the approver is not asked to check the object id: %s", d.body)
		}
		approve := url.Values{"proposal": {id}, web.CSRFField: {bea.csrfCookie()}}
		if r := bea.do(http.MethodPost, escPath(op)+"/approve", approve); r.status != http.StatusUnprocessableEntity ||
			!testid(r.body, "approve-checked-error", "Confirm that you checked object ch_77") ||
			!strings.Contains(string(r.body), `aria-describedby="approve-checked-error"`) {
			t.Fatalf("approved unchecked: %d %s", r.status, r.body)
		}
		approve.Set("checked_at_target", "yes")
		if r := bea.do(http.MethodPost, escPath(op)+"/approve", approve); r.status != http.StatusSeeOther {
			t.Fatalf("approve: %d %s", r.status, r.body)
		}
		got, _ := c.store.Get(context.Background(), "acme", op.ID)
		if got.State != ledger.Succeeded || got.RemoteRef != "ch_77" {
			t.Fatalf("after approval: %s %q", got.State, got.RemoteRef)
		}
		if n := resolvedByHand(t, reg, ledger.Succeeded); n != 1 {
			t.Fatalf("settle_transitions_total{from=ESCALATED,to=SUCCEEDED} = %v, want 1", n)
		}
		story := c.as("support").get(c.opPath(op))
		body := string(story.body)
		for _, want := range []string{"Proposed: confirm succeeded with ch_77", "Olu Owner (owner)", "Approved: confirm succeeded with ch_77",
			"Bea Owner (owner)", "the provider&#39;s dashboard shows ch_77", "Request id: ",
			"The approver confirmed having checked object ch_77 at "} {
			if !strings.Contains(body, want) {
				t.Fatalf("the timeline lacks %q: %s", want, body)
			}
		}
		if q := olu.get("/escalations"); strings.Contains(string(q.body), `data-operation-id="`+op.ID+`"`) {
			t.Fatal("a confirmed operation is still in the queue")
		}
	})
}

// resolvedByHand is settle_transitions_total{from="ESCALATED",to=to}.
func resolvedByHand(t *testing.T, reg *prometheus.Registry, to ledger.State) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "settle_transitions_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["from"] == string(ledger.Escalated) && labels["to"] == string(to) {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// An owner of another target of the same tenant, or of another tenant,
// gets the same 404 as for an unknown operation, for pages and writes.
func TestConsole_EscalationOtherOwners(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{})
		op, r := c.proposed("acme")
		rio := c.as("refunds-owner")
		if d := rio.get(escPath(op)); d.status != http.StatusNotFound {
			t.Fatalf("another target's owner read the escalation: %d", d.status)
		}
		if q := rio.get("/escalations"); strings.Contains(string(q.body), op.ID) {
			t.Fatal("another target's escalation is in the queue")
		}
		for _, path := range []string{"/approve", "/reject", "/propose"} {
			form := url.Values{"proposal": {fmt.Sprint(r.ID)}, "reason": {"x"}, "kind": {"confirm_not_applied"},
				web.CSRFField: {rio.csrfCookie()}}
			if got := rio.do(http.MethodPost, escPath(op)+path, form); got.status != http.StatusNotFound {
				t.Fatalf("another target's owner %s: %d", path, got.status)
			}
		}
		// A proposal id of another operation is no proposal of this one.
		other := c.escalated("acme")
		olu := c.as("owner")
		form := url.Values{"proposal": {fmt.Sprint(r.ID)}, web.CSRFField: {olu.csrfCookie()}}
		if got := olu.do(http.MethodPost, escPath(other)+"/approve", form); got.status != http.StatusNotFound {
			t.Fatalf("a proposal approved through another operation: %d", got.status)
		}
		if got, _ := c.store.Get(context.Background(), "acme", op.ID); got.State != ledger.Escalated {
			t.Fatalf("state %s", got.State)
		}
	})
}

// noContracts knows no target's contract.
type noContracts struct{}

func (noContracts) Get(string) (*target.Contract, bool) { return nil, false }
