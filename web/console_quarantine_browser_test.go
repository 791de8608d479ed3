package web_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"settle/auth/oidctest"
	"settle/ledger/storetest"
	"settle/web"
)

// In Chromium, with and without JavaScript, an owner works the
// quarantine as a queue: the compact list opens an item's page, where
// they dismiss it; they select two rows and dismiss them on the
// confirmation page with one reason; they dismiss every event matching a
// filter; the Resolved tab says what was done, by whom, and so does the
// dismissed item's own page. Every page is
// checked with axe-core and written as a screenshot.
func TestConsole_QuarantineQueueBrowser(t *testing.T) {
	t.Parallel()
	s := storetest.Postgres().New(t, time.Now).(store)
	c, prov := oidcConsole(t, s, web.Config{}, `  - group: payments-acme
    role: owner
    tenants: [acme]
    targets: [payments]
`,
		oidctest.User{Subject: "olu-q", Name: "Olu Owner", Email: "olu@example.test", Groups: []string{"payments-acme"}})
	for _, js := range []bool{true, false} {
		name := map[bool]string{true: "js", false: "nojs"}[js]
		one := c.quarantinedOn("acme", "payments", "evt_one_"+name)
		two := c.quarantinedOn("acme", "payments", "evt_two_"+name)
		three := c.quarantinedOn("acme", "payments", "evt_three_"+name)
		c.quarantinedOn("acme", "payments", "evt_all_"+name+"_1")
		c.quarantinedOn("acme", "payments", "evt_all_"+name+"_2")
		b, check := visit(t)
		if !js {
			b.DisableJavaScript()
		}
		prov.SignInAs(t, "olu-q")
		if st := b.Navigate(c.base + "/quarantine"); st != http.StatusOK {
			t.Fatalf("%s: quarantine: %d", name, st)
		}
		if b.Count(`main form[method="post"]`) != 0 {
			t.Fatalf("%s: the list carries action forms", name)
		}
		check("list-" + name)

		id := strings.TrimPrefix(one, "acme/")
		if st := b.Submit(`[data-item="` + id + `"] [data-testid="item-link"]`); st != http.StatusOK {
			t.Fatalf("%s: item page: %d", name, st)
		}
		if got := b.TextByTestID("item-heading"); got != "Quarantined event evt_one_"+name {
			t.Fatalf("%s: heading %q", name, got)
		}
		check("item-" + name)
		b.Fill("#dismiss-reason", "a test event from the provider's dashboard")
		if st := b.Submit(`[data-testid="dismiss-submit"]`); st != http.StatusOK {
			t.Fatalf("%s: dismiss: %d", name, st)
		}
		if got := b.TextByTestID("done"); !strings.HasPrefix(got, "Dismissed.") {
			t.Fatalf("%s: after dismissing: %q", name, got)
		}

		b.Click(`input[value="` + two + `"]`)
		b.Click(`input[value="` + three + `"]`)
		if st := b.Submit(`[data-testid="bulk-selected"]`); st != http.StatusOK {
			t.Fatalf("%s: confirmation page: %d", name, st)
		}
		if got := b.TextByTestID("bulk-heading"); got != "Dismiss 2 quarantined events" {
			t.Fatalf("%s: confirmation heading %q", name, got)
		}
		check("bulk-selected-" + name)
		b.Fill("#bulk-why", "test events from the provider's dashboard")
		if st := b.Submit(`[data-testid="bulk-confirm"]`); st != http.StatusOK {
			t.Fatalf("%s: bulk dismiss: %d", name, st)
		}
		if got := b.TextByTestID("done"); got != "Dismissed 2." {
			t.Fatalf("%s: after the bulk dismissal: %q", name, got)
		}
		check("bulk-done-" + name)

		if st := b.Navigate(c.base + "/quarantine?q=evt_all_" + name + "_1"); st != http.StatusOK {
			t.Fatalf("%s: filtered list: %d", name, st)
		}
		if st := b.Submit(`[data-testid="bulk-all"]`); st != http.StatusOK {
			t.Fatalf("%s: confirmation of all matching: %d", name, st)
		}
		if got := b.TextByTestID("bulk-summary"); !strings.HasPrefix(got, "1 open event matches this filter: reference evt_all_"+name+"_1") {
			t.Fatalf("%s: summary %q", name, got)
		}
		check("bulk-all-" + name)
		b.Fill("#bulk-why", "replayed by the provider")
		if st := b.Submit(`[data-testid="bulk-confirm"]`); st != http.StatusOK {
			t.Fatalf("%s: dismiss all matching: %d", name, st)
		}
		if got := b.TextByTestID("done"); got != "Dismissed 1." {
			t.Fatalf("%s: after dismissing all matching: %q", name, got)
		}

		if st := b.Navigate(c.base + "/quarantine?status=resolved"); st != http.StatusOK {
			t.Fatalf("%s: resolved tab: %d", name, st)
		}
		if got := b.Text(`[data-item="` + id + `"] [data-testid="resolution"]`); !strings.HasPrefix(got, "Dismissed by Olu Owner (owner), ") {
			t.Fatalf("%s: resolved item says %q", name, got)
		}
		check("resolved-" + name)
		// The item's page says who resolved it, and offers no action.
		if st := b.Submit(`[data-item="` + id + `"] [data-testid="item-link"]`); st != http.StatusOK {
			t.Fatalf("%s: resolved item's page: %d", name, st)
		}
		if got := b.TextByTestID("already"); !strings.HasPrefix(got, "Already dismissed by Olu Owner (owner) at ") ||
			b.Count(`[data-testid="dismiss-form"]`) != 0 {
			t.Fatalf("%s: a resolved item's page says %q", name, got)
		}
		check("resolved-item-" + name)
	}
}
