package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"settle/auth/oidctest"
	"settle/ledger/storetest"
	"settle/web"
)

// TestConsole_SupportBrowser is support answering a customer about a
// duplicated charge, in headless Chromium signed in through a real OpenID
// provider: the second object id finds the operation, whose banner says
// not to call it done and who handles it; the finding opens read-only; the
// person picks their time zone (a bad name is refused beside the field)
// and the operation's times follow it. Every page is checked with axe and
// written as a screenshot.
func TestConsole_SupportBrowser(t *testing.T) {
	t.Parallel()
	s := storetest.Postgres().New(t, time.Now).(store)
	c, prov := oidcConsole(t, s, web.Config{}, `  - group: support-acme
    role: support
    tenants: [acme]
`,
		oidctest.User{Subject: "sam-5", Name: "Sam Support", Email: "sam@example.test", Groups: []string{"support-acme"}})
	base := c.base
	f := c.finding("acme")

	b, check := visit(t)
	prov.SignInAs(t, "sam-5")
	if st := b.Navigate(base + "/operations?q=" + url.QueryEscape(" ch_second ")); st != http.StatusOK {
		t.Fatalf("search by the second object id: %d", st)
	}
	if got := b.TextByTestID("meaning"); !strings.HasPrefix(got, "Possible duplicate — Two charges may exist at payments") ||
		!strings.Contains(got, "Do not tell the customer it is done") {
		t.Fatalf("banner %q", got)
	}
	if got := b.TextByTestID("fact-created"); !strings.Contains(got, " UTC)") {
		t.Fatalf("registered %q, want the UTC clock time beside it", got)
	}
	check("support-duplicate")

	b.Click(`[data-testid="finding-link"]`)
	if got := b.TextByTestID("finding-title"); !strings.HasPrefix(got, "Duplicate at payments") {
		t.Fatalf("finding page %q", got)
	}
	if b.Count(`[data-testid="ack-form"]`) != 0 || !strings.Contains(b.TextByTestID("finding-remote-ids"), "ch_second") {
		t.Fatal("support's finding page offers the acknowledgement, or lacks the second id")
	}
	check("support-finding")

	if st := b.Navigate(base + "/settings"); st != http.StatusOK {
		t.Fatalf("settings: %d", st)
	}
	b.Fill("#zone", "Mars/Olympus")
	if st := b.Submit(`[data-testid="zone-submit"]`); st != http.StatusUnprocessableEntity {
		t.Fatalf("a bad zone: %d, want 422", st)
	}
	if got := b.TextByTestID("problem"); !strings.Contains(got, "not a time zone") {
		t.Fatalf("problem %q", got)
	}
	check("settings-problem")
	b.Fill("#zone", "Europe/Berlin")
	if st := b.Submit(`[data-testid="zone-submit"]`); st != http.StatusOK {
		t.Fatalf("save zone: %d", st)
	}
	if got := b.TextByTestID("done"); !strings.Contains(got, "Europe/Berlin") {
		t.Fatalf("after saving: %q", got)
	}
	check("settings-saved")
	if st := b.Navigate(base + "/operations/acme/" + f.OperationID); st != http.StatusOK {
		t.Fatalf("operation: %d", st)
	}
	if got := b.TextByTestID("fact-created"); !strings.Contains(got, " CET)") && !strings.Contains(got, " CEST)") {
		t.Fatalf("registered %q, want Berlin's clock", got)
	}
	if got := b.TextByTestID("zone-link"); !strings.Contains(got, "Europe/Berlin") {
		t.Fatalf("header %q", got)
	}
	check("support-duplicate-berlin")
}
