package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"settle/auth/oidctest"
	"settle/ledger"
	"settle/ledger/storetest"
	"settle/web"
	"settle/web/browsertest"
)

// TestConsole_EscalationBrowser: in headless Chromium, through a real
// OpenID provider, owner Ada proposes "confirm succeeded" on an escalated
// operation and is offered no approval; owner Ben approves it; the
// operation is Confirmed and its timeline names both. Support reaches no
// escalation page. Every page is checked with axe-core and written as a
// screenshot.
func TestConsole_EscalationBrowser(t *testing.T) {
	t.Parallel()
	s := storetest.Postgres().New(t, time.Now).(store)
	c, prov := oidcConsole(t, s, web.Config{}, `  - group: payments-owners
    role: owner
    tenants: [acme]
    targets: [payments]
  - group: support-acme
    role: support
    tenants: [acme]
`,
		oidctest.User{Subject: "ada-1", Name: "Ada Owner", Email: "ada@example.test", Groups: []string{"payments-owners"}}, oidctest.User{Subject: "ben-2", Name: "Ben Owner", Email: "ben@example.test", Groups: []string{"payments-owners"}}, oidctest.User{Subject: "sam-7", Name: "Sam Support", Email: "sam@example.test", Groups: []string{"support-acme"}})
	base := c.base
	op := c.escalated("acme")
	detail := base + escPath(op)

	b, check := visit(t)

	prov.SignInAs(t, "ada-1")
	if st := b.Navigate(base + "/escalations"); st != http.StatusOK {
		t.Fatalf("queue: %d", st)
	}
	if n := b.Count(`[data-operation-id="` + op.ID + `"]`); n != 1 {
		t.Fatalf("the escalated operation is not in the queue (%d)", n)
	}
	check("escalations")
	if st := b.Submit(browsertest.TestID("escalation-link")); st != http.StatusOK {
		t.Fatalf("detail: %d", st)
	}
	if got := b.TextByTestID("answer-match-text"); !strings.Contains(got, "amount") {
		t.Fatalf("the match answer %q names no field", got)
	}
	check("escalation")
	b.Fill(`input[name="remote_ref"]`, "ch_4242")
	b.Fill(`input[name="reason"]`, "The provider's dashboard shows ch_4242 for this order")
	if st := b.Submit(browsertest.TestID("propose-submit")); st != http.StatusOK {
		t.Fatalf("propose: %d", st)
	}
	if n := b.Count(browsertest.TestID("approve")); n != 0 {
		t.Fatal("the proposer is offered the approval")
	}
	if got := b.TextByTestID("awaiting-other"); !strings.Contains(got, "another owner") {
		t.Fatalf("awaiting: %q", got)
	}
	check("escalation-proposed")
	if st := b.Navigate(base + "/escalations/proposals"); st != http.StatusOK {
		t.Fatalf("proposals: %d", st)
	}
	check("proposals-mine")
	if st := b.Submit(browsertest.TestID("sign-out")); st != http.StatusOK {
		t.Fatalf("sign-out: %d", st)
	}

	prov.SignInAs(t, "ben-2")
	if st := b.Navigate(detail); st != http.StatusOK {
		t.Fatalf("detail as Ben: %d", st)
	}
	check("escalation-to-approve")
	// No lookup checks ch_4242: Ben confirms he checked it at the target.
	b.Click(browsertest.TestID("approve-checked"))
	if st := b.Submit(browsertest.TestID("approve")); st != http.StatusOK {
		t.Fatalf("approve: %d", st)
	}
	if got := b.TextByTestID("status"); got != "Confirmed" {
		t.Fatalf("after approval: %q", got)
	}
	if st := b.Submit(browsertest.TestID("story-link")); st != http.StatusOK {
		t.Fatalf("story: %d", st)
	}
	timeline := b.TextByTestID("timeline")
	for _, want := range []string{"Proposed: confirm succeeded with ch_4242", "Ada Owner (owner)", "Approved: confirm succeeded with ch_4242", "Ben Owner (owner)"} {
		if !strings.Contains(timeline, want) {
			t.Errorf("timeline lacks %q:\n%s", want, timeline)
		}
	}
	check("operation-resolved")
	if got, _ := s.Get(context.Background(), "acme", op.ID); got.State != ledger.Succeeded || got.RemoteRef != "ch_4242" {
		t.Fatalf("stored: %s %q", got.State, got.RemoteRef)
	}
	if st := b.Submit(browsertest.TestID("sign-out")); st != http.StatusOK {
		t.Fatalf("sign-out: %d", st)
	}

	prov.SignInAs(t, "sam-7")
	if st := b.Navigate(base + "/escalations"); st != http.StatusForbidden {
		t.Fatalf("support reached the queue: %d", st)
	}
	if n := b.Count(`nav a[href="/escalations"]`); n != 0 {
		t.Fatal("support is shown the Escalations link")
	}
}
