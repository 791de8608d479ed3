package web_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"settle/ledger"
	"settle/web"
)

// Support answering a customer about a charge the target holds twice: the
// operation's banner says not to call it done and who handles it, the
// second object id finds the operation, and the finding opens read-only
// (its acknowledgement stays the owners').
func TestConsole_SupportDuplicateFinding(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{})
		f := c.finding("acme")
		op := ledger.Operation{Tenant: f.Tenant, ID: f.OperationID}
		b := c.as("support")
		r := b.get(c.opPath(op))
		if r.status != http.StatusOK || !testid(r.body, "meaning", "Possible duplicate — Two") {
			t.Fatalf("operation page: %d %.2000s", r.status, r.body)
		}
		if strings.Contains(string(r.body), "You can tell the customer it is done") ||
			!strings.Contains(string(r.body), "Do not tell the customer it is done") {
			t.Fatalf("the banner does not say to hold back: %.2000s", r.body)
		}
		href := "/findings/acme/" + strconv.FormatInt(f.ID, 10)
		if !strings.Contains(string(r.body), `href="`+href+`"`) || testid(r.body, "findings-link", "") {
			t.Fatalf("support's banner links %q, and not to the owners' findings page: %.3000s", href, r.body)
		}
		r = b.get(href)
		if r.status != http.StatusOK || !testid(r.body, "finding-title", "Duplicate at payments") ||
			!testid(r.body, "finding-note", "Only") || strings.Contains(string(r.body), "ack-form") {
			t.Fatalf("finding page for support: %d %.3000s", r.status, r.body)
		}
		if r := b.get("/findings"); r.status != http.StatusForbidden {
			t.Fatalf("support on the findings list: %d", r.status)
		}
		if r := b.do(http.MethodPost, href+"/acknowledge", b.withCSRF(url.Values{"note": {"x"}})); r.status != http.StatusForbidden {
			t.Fatalf("support acknowledged: %d", r.status)
		}
		// The id the customer quotes from the second charge.
		if r := b.get("/operations?q=" + url.QueryEscape(" ch_second ")); r.status != http.StatusSeeOther ||
			r.header.Get("Location") != c.opPath(op) {
			t.Fatalf("search by the second object id: %d %q", r.status, r.header.Get("Location"))
		}
		// Another tenant's finding answers as an unknown one.
		g := c.finding("globex")
		if r := b.get("/findings/globex/" + strconv.FormatInt(g.ID, 10)); r.status != http.StatusNotFound {
			t.Fatalf("another tenant's finding: %d", r.status)
		}
		if r := b.get("/findings/acme/" + strconv.FormatInt(g.ID, 10)); r.status != http.StatusNotFound {
			t.Fatalf("another tenant's finding under support's tenant: %d", r.status)
		}
		// The owner gets the same banner and the way to act on it.
		r = c.as("owner").get(c.opPath(op))
		if !testid(r.body, "meaning", "Possible duplicate") || !testid(r.body, "findings-link", "Review findings") {
			t.Fatalf("owner's operation page: %.3000s", r.body)
		}
		if r := c.as("owner").get(href); r.status != http.StatusOK || !testid(r.body, "findings-link", "Acknowledge") {
			t.Fatalf("owner's finding page: %d %.2000s", r.status, r.body)
		}
	})
}

// An owner's view of an escalated operation links to its decision page;
// support's, who may not decide, does not.
func TestConsole_OperationLinksEscalation(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{})
		op := c.escalated("acme")
		want := `href="/escalations/acme/` + op.ID + `"`
		if r := c.as("owner").get(c.opPath(op)); !testid(r.body, "escalation-link", "Decide how it ended") ||
			!strings.Contains(string(r.body), want) {
			t.Fatalf("owner's page: %.3000s", r.body)
		}
		if r := c.as("support").get(c.opPath(op)); r.status != http.StatusOK || testid(r.body, "escalation-link", "") {
			t.Fatalf("support's page links the decision: %d", r.status)
		}
		if r := c.as("owner").get(c.opPath(c.acme)); testid(r.body, "escalation-link", "") {
			t.Fatal("a settled operation links a decision page")
		}
	})
}
