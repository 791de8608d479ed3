package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"settle/ledger"
	"settle/ledger/storetest"
	"settle/web"
)

// The queue's filters live in the URL: a reference finds its operation,
// "awaiting my approval" what another owner proposed, a bad age is said
// in words.
func TestConsole_EscalationQueueFilters(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{Contracts: noContracts{}})
		a, b := c.escalated("acme"), c.escalated("acme")
		g := c.escalated("globex")
		olu, bea := c.as("owner"), c.as("owner-b")
		rows := func(r response) []string {
			var ids []string
			for _, part := range strings.Split(string(r.body), `data-testid="escalation-row" data-operation-id="`)[1:] {
				ids = append(ids, part[:36])
			}
			return ids
		}
		for name, c := range map[string]struct {
			path string
			want []string
		}{
			"ByIntent":        {"/escalations?q=" + url.QueryEscape(" "+strings.ToUpper(a.IntentRef)+" "), []string{a.ID}},
			"ByIDPrefix":      {"/escalations?q=" + b.ID[:8], []string{b.ID}},
			"OtherTenantsRef": {"/escalations?q=" + g.IntentRef, nil},
			"Reason":          {"/escalations?reason=DOES+NOT+MATCH&sort=newest", []string{b.ID, a.ID}},
			"OlderThanADay":   {"/escalations?age=24h", nil},
		} {
			r := olu.get(c.path)
			if got := rows(r); r.status != http.StatusOK || strings.Join(got, ",") != strings.Join(c.want, ",") {
				t.Errorf("%s: %d, rows %v, want %v", name, r.status, got, c.want)
			}
		}
		if r := olu.get("/escalations?age=5m"); !testid(r.body, "filter-problem", "Choose an age from the list.") {
			t.Errorf("an age not offered: %s", r.body)
		}
		if r := olu.post("/escalations/"+a.Tenant+"/"+a.ID+"/propose", url.Values{"kind": {"confirm_not_applied"},
			"reason": {"no charge at the provider"}, "despite_evidence": {"yes"}}); r.status != http.StatusSeeOther {
			t.Fatalf("propose: %d %s", r.status, r.body)
		}
		if got := rows(bea.get("/escalations?mine=1")); strings.Join(got, ",") != a.ID {
			t.Errorf("awaiting Bea: %v, want %s", got, a.ID)
		}
		if got := rows(olu.get("/escalations?mine=1")); len(got) != 0 {
			t.Errorf("awaiting Olu (her own proposal): %v", got)
		}
		// The filter is carried by the bulk form, for "all matching".
		if r := olu.get("/escalations?q=" + a.IntentRef); !strings.Contains(string(r.body), `name="filter" value="q=`+a.IntentRef+`"`) {
			t.Errorf("the bulk form does not carry the filter: %s", r.body)
		}
	})
}

// Bulk handling: Olu selects two of her operations and one of another
// tenant, reviews the list (the other tenant's is left out), proposes for
// all of them at once; she cannot approve her own proposals in bulk; Bea
// reviews them one by one and approves; each operation is closed and its
// events name who proposed and who approved.
func TestConsole_EscalationBulk(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{Contracts: noContracts{}})
		a, b, d := c.escalatedUnanswered("acme"), c.escalatedUnanswered("acme"), c.escalatedUnanswered("acme")
		g := c.escalatedUnanswered("globex")
		olu, bea := c.as("owner"), c.as("owner-b")
		ref := func(op ledger.Operation) string { return op.Tenant + "/" + op.ID }

		review := olu.post("/escalations/bulk/review", url.Values{"op": {ref(a), ref(b), ref(g)}, "scope": {"selected"},
			"kind": {"confirm_not_applied"}, "why": {"the provider's export shows none of them"}})
		body := string(review.body)
		if review.status != http.StatusOK || strings.Count(body, `name="item"`) != 2 ||
			!strings.Contains(body, `name="item" value="`+ref(a)+`"`) || strings.Contains(body, `name="item" value="`+ref(g)+`"`) ||
			!testid(review.body, "bulk-heading", "Propose “Confirm not applied” for 2 operations") ||
			!strings.Contains(body, "Not found among the operations you resolve.") {
			t.Fatalf("review: %d %s", review.status, body)
		}
		// Nothing is proposed by the review.
		if props := c.openProposals(); len(props) != 0 {
			t.Fatalf("the review proposed %v", props)
		}
		// "All matching this filter" is resolved on the server from the filter.
		all := olu.post("/escalations/bulk/review", url.Values{"scope": {"all"}, "filter": {"q=" + d.IntentRef},
			"op": {ref(a)}, "kind": {"replay"}, "why": {"x"}})
		if strings.Count(string(all.body), `name="item"`) != 1 || !strings.Contains(string(all.body), `value="`+ref(d)+`"`) {
			t.Fatalf("all matching: %s", all.body)
		}
		if r := olu.post("/escalations/bulk/review", url.Values{"op": {ref(a)}, "kind": {"confirm_not_applied"}}); r.status != http.StatusUnprocessableEntity ||
			!testid(r.body, "bulk-problem", "Give your reason") {
			t.Fatalf("no reason: %d %s", r.status, r.body)
		}
		if r := olu.post("/escalations/bulk/review", url.Values{"op": {ref(a)}, "kind": {"confirm_succeeded"}, "why": {"x"}}); r.status != http.StatusUnprocessableEntity {
			t.Fatalf("bulk confirm succeeded: %d %s", r.status, r.body)
		}

		// A forged confirmation naming another tenant's operation: that item
		// is refused, the others proposed.
		done := olu.post("/escalations/bulk/propose", url.Values{"item": {ref(a), ref(b), ref(g)},
			"kind": {"confirm_not_applied"}, "why": {"the provider's export shows none of them"}})
		if done.status != http.StatusOK || !testid(done.body, "bulk-heading", "2 of 3 proposed") {
			t.Fatalf("bulk propose: %d %s", done.status, done.body)
		}
		props := c.openProposals()
		if len(props) != 2 {
			t.Fatalf("open proposals: %+v", props)
		}
		items := url.Values{}
		for _, r := range props {
			items.Add("proposal", proposalRef(r))
		}
		// Olu cannot approve her own, in bulk or forged.
		if r := olu.post("/escalations/bulk/approve/review", items); r.status != http.StatusUnprocessableEntity ||
			strings.Count(string(r.body), "Your own proposal") != 2 {
			t.Fatalf("own bulk approval review: %d %s", r.status, r.body)
		}
		if r := olu.post("/escalations/bulk/approve", url.Values{"item": items["proposal"]}); !testid(r.body, "bulk-heading", "0 of 2 approved") {
			t.Fatalf("forged own bulk approval: %s", r.body)
		}
		// Bea reviews them item by item, then approves.
		r := bea.post("/escalations/bulk/approve/review", items)
		if r.status != http.StatusOK || strings.Count(string(r.body), `name="item"`) != 2 ||
			!strings.Contains(string(r.body), "proposed by Olu Owner") || !strings.Contains(string(r.body), a.IntentRef) {
			t.Fatalf("bulk approval review: %d %s", r.status, r.body)
		}
		r = bea.post("/escalations/bulk/approve", url.Values{"item": append(items["proposal"], "globex/1")})
		if !testid(r.body, "bulk-heading", "2 of 3 approved") {
			t.Fatalf("bulk approve: %s", r.body)
		}
		for _, op := range []ledger.Operation{a, b} {
			got, err := c.store.Get(context.Background(), op.Tenant, op.ID)
			if err != nil || got.State != ledger.FailedTerminal {
				t.Fatalf("%s after bulk approval: %s %v", op.ID, got.State, err)
			}
			events, err := c.store.Events(context.Background(), op.Tenant, op.ID)
			if err != nil {
				t.Fatal(err)
			}
			last := events[len(events)-1]
			if !strings.Contains(last.Actor, "demo:bea") {
				t.Errorf("last event of %s by %q, want Bea", op.ID, last.Actor)
			}
		}
		if got, _ := c.store.Get(context.Background(), d.Tenant, d.ID); got.State != ledger.Escalated {
			t.Errorf("an operation left out changed: %s", got.State)
		}
	})
}

// openProposals are acme's open proposals.
func (c *console) openProposals() []ledger.Resolution {
	c.t.Helper()
	list, err := c.store.OpenResolutions(context.Background(), []string{"acme"}, false)
	if err != nil {
		c.t.Fatal(err)
	}
	return list
}

// The page after sign-in ("/") fits the role: owners their queue,
// managers the figures, support and admins the search.
func TestConsole_LandingByRole(t *testing.T) {
	t.Parallel()
	c := newConsole(t, storetest.SQLite().New(t, time.Now).(store), web.Config{Contracts: noContracts{}})
	for who, want := range map[string]string{"owner": "/escalations", "manager": "/figures", "support": "/operations",
		"admin": "/operations"} {
		b := c.as(who)
		r := b.get("/")
		if loc := r.header.Get("Location"); r.status != http.StatusSeeOther || loc != want {
			t.Errorf("%s lands at %d %q, want %q", who, r.status, loc, want)
			continue
		}
		if r := b.get(want); r.status != http.StatusOK {
			t.Errorf("%s's landing page %s: %d", who, want, r.status)
		}
	}
}
