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

// TestConsole_BulkProposeAndApprove: in headless Chromium, Ada selects two
// of three escalations, reviews them on the confirmation page and
// proposes "confirm not applied" for both; Ben reviews her proposals one
// by one and approves them in bulk. Every page passes axe. The flow is
// plain forms (console.js only refreshes relative times and copy
// buttons); TestConsole_EscalationBulk drives the same forms with no
// script at all, over HTTP.
func TestConsole_BulkProposeAndApprove(t *testing.T) {
	t.Parallel()
	s := storetest.Postgres().New(t, time.Now).(store)
	c, prov := oidcConsole(t, s, web.Config{Contracts: noContracts{}}, `  - group: payments-owners
    role: owner
    tenants: [acme]
    targets: [payments]
`, oidctest.User{Subject: "ada-1", Name: "Ada Owner", Email: "ada@example.test", Groups: []string{"payments-owners"}},
		oidctest.User{Subject: "ben-1", Name: "Ben Owner", Email: "ben@example.test", Groups: []string{"payments-owners"}})
	a, b, left := c.escalatedUnanswered("acme"), c.escalatedUnanswered("acme"), c.escalatedUnanswered("acme")

	ada, check := visit(t)
	prov.SignInAs(t, "ada-1")
	if st := ada.Navigate(c.base + "/escalations"); st != http.StatusOK {
		t.Fatalf("queue: %d", st)
	}
	ada.Click(`#select-` + a.ID)
	ada.Click(`#select-` + b.ID)
	ada.Fill(`[data-testid="bulk-reason"]`, "the provider's export lists none of them")
	check("bulk-queue-selected")
	if st := ada.Submit(`[data-testid="bulk-review"]`); st != http.StatusOK {
		t.Fatalf("review: %d", st)
	}
	if n := ada.Count(`[data-testid="bulk-items"] [data-testid="bulk-item"]`); n != 2 {
		t.Fatalf("the confirmation page lists %d operations, want 2", n)
	}
	check("bulk-propose-confirm")
	if st := ada.Submit(`[data-testid="bulk-confirm"]`); st != http.StatusOK {
		t.Fatalf("propose: %d", st)
	}
	if got := ada.TextByTestID("bulk-heading"); got != "2 of 2 proposed" {
		t.Fatalf("result: %q", got)
	}
	check("bulk-propose-result")

	ben, checkBen := visit(t)
	prov.SignInAs(t, "ben-1")
	if st := ben.Navigate(c.base + "/escalations/proposals"); st != http.StatusOK {
		t.Fatalf("proposals: %d", st)
	}
	if n := ben.Count(`[data-testid="proposal-select"]`); n != 2 {
		t.Fatalf("%d proposals to select, want 2", n)
	}
	ben.Click(`[data-testid="proposals-awaiting"] li:nth-child(1) [data-testid="proposal-select"]`)
	ben.Click(`[data-testid="proposals-awaiting"] li:nth-child(2) [data-testid="proposal-select"]`)
	checkBen("bulk-approve-select")
	if st := ben.Submit(`[data-testid="bulk-approve-review"]`); st != http.StatusOK {
		t.Fatalf("approval review: %d", st)
	}
	if got := ben.Text(`[data-testid="bulk-items"]`); !strings.Contains(got, "proposed by Ada Owner") || !strings.Contains(got, a.IntentRef) {
		t.Fatalf("the approval review lists %q", got)
	}
	checkBen("bulk-approve-confirm")
	if st := ben.Submit(`[data-testid="bulk-confirm"]`); st != http.StatusOK {
		t.Fatalf("approve: %d", st)
	}
	if got := ben.TextByTestID("bulk-heading"); got != "2 of 2 approved" {
		t.Fatalf("result: %q", got)
	}
	checkBen("bulk-approve-result")
	if st := ben.Navigate(c.base + "/escalations"); st != http.StatusOK || ben.Count(`[data-operation-id="`+left.ID+`"]`) != 1 ||
		ben.Count(`[data-operation-id="`+a.ID+`"]`) != 0 {
		t.Fatal("the queue after the bulk approval still holds an approved operation, or lost the one left out")
	}
}
