package web_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"settle/auth/oidctest"
	"settle/ledger/storetest"
	"settle/web"
)

// TestConsole_ReviewBrowser is an owner's review in headless Chromium,
// signed in through a real OpenID provider: they link a quarantined event
// to the tenant's pending operation through the form, acknowledge an audit
// finding with a note, and read both on the operation's pages. Every page
// is checked with axe-core and written as a screenshot.
func TestConsole_ReviewBrowser(t *testing.T) {
	t.Parallel()
	s := storetest.Postgres().New(t, time.Now).(store)
	c, prov := oidcConsole(t, s, web.Config{}, `  - group: payments-acme
    role: owner
    tenants: [acme]
    targets: [payments]
`,
		oidctest.User{Subject: "olu-3", Name: "Olu Owner", Email: "olu@example.test", Groups: []string{"payments-acme"}})
	base := c.base
	pending := c.pending("acme", "inv-1001")
	item := strconv.FormatInt(c.quarantined("acme"), 10)
	f := c.finding("acme")

	b, check := visit(t)
	prov.SignInAs(t, "olu-3")
	if st := b.Navigate(base + "/quarantine"); st != http.StatusOK {
		t.Fatalf("quarantine: %d", st)
	}
	check("quarantine")

	// The row opens the item's page, where its forms are.
	if st := b.Submit(`[data-item="` + item + `"] [data-testid="item-link"]`); st != http.StatusOK {
		t.Fatalf("item page: %d", st)
	}
	if got := b.TextByTestID("item-heading"); got != "Quarantined event evt_acme" {
		t.Fatalf("item heading %q", got)
	}
	check("quarantine-item")
	// A link without a reason is refused by the browser's own check; one
	// to a reference the tenant does not have is refused by the server,
	// beside the field, with what was typed kept.
	b.Fill("#link-operation", "inv-9999")
	b.Fill("#link-reason", "the event's metadata carries our reference")
	if st := b.Submit(`[data-testid="link-submit"]`); st != http.StatusUnprocessableEntity {
		t.Fatalf("link to an unknown reference: %d, want 422", st)
	}
	if got := b.TextByTestID("link-operation-error"); !strings.Contains(got, "No operation of tenant acme") {
		t.Fatalf("problem %q", got)
	}
	if got := b.Attr("#link-reason", "value"); got != "the event's metadata carries our reference" {
		t.Fatalf("the reason typed is not kept: %q", got)
	}
	check("quarantine-item-problem")
	b.Fill("#link-operation", "inv-1001")
	if st := b.Submit(`[data-testid="link-submit"]`); st != http.StatusOK {
		t.Fatalf("link: %d", st)
	}
	if got := b.TextByTestID("done"); !strings.HasPrefix(got, "Linked.") {
		t.Fatalf("after linking: %q", got)
	}
	check("quarantine-linked")

	// The open finding is on its operation's page.
	if st := b.Navigate(base + "/operations/acme/" + f.OperationID); st != http.StatusOK {
		t.Fatalf("finding's operation: %d", st)
	}
	if got := b.TextByTestID("open-findings"); !strings.Contains(got, "Duplicate at payments") {
		t.Fatalf("banner %q", got)
	}
	check("operation-finding")

	if st := b.Navigate(base + "/findings"); st != http.StatusOK {
		t.Fatalf("findings: %d", st)
	}
	check("findings")
	b.Fill("#ack-note-"+strconv.FormatInt(f.ID, 10), "refunding ch_second at the target")
	if st := b.Submit(`[data-testid="ack-submit"]`); st != http.StatusOK {
		t.Fatalf("acknowledge: %d", st)
	}
	if got := b.TextByTestID("done"); !strings.HasPrefix(got, "Acknowledged.") {
		t.Fatalf("after acknowledging: %q", got)
	}
	check("findings-acknowledged")

	if st := b.Navigate(base + "/operations/acme/" + pending.ID); st != http.StatusOK {
		t.Fatalf("operation: %d", st)
	}
	if got := b.TextByTestID("timeline"); !strings.Contains(got, "Olu Owner (owner)") ||
		!strings.Contains(got, "the event's metadata carries our reference") {
		t.Fatalf("review on the operation's page: %q", got)
	}
	if got := b.TextByTestID("status"); got != "Confirmation pending" {
		t.Fatalf("status after the link: %q", got)
	}
	check("operation-reviewed")
}
