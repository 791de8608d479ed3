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

// TestConsole_DecideWithTheEvidence: in headless Chromium, with and
// without JavaScript, through a real OpenID provider. An escalated
// operation at a target without lookup carries a quarantined webhook
// naming ch_q1. Owner Ada sees every piece of evidence and a warning
// beside "confirm not applied"; proposing it unconfirmed is refused (422,
// the page again with the error beside the box and her reason kept);
// ticked, it is proposed. Owner Ben sees the warning, is refused without
// his own tick, and approves with it. On a second operation Ada follows
// the "Confirm succeeded with ch_q1" suggestion, which fills the form in,
// and Ben must confirm he checked ch_q1 at the target. axe on each page.
func TestConsole_DecideWithTheEvidence(t *testing.T) {
	t.Parallel()
	for _, js := range []bool{true, false} {
		name := "JavaScript"
		if !js {
			name = "NoJavaScript"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			decideFlow(t, js)
		})
	}
}

func decideFlow(t *testing.T, js bool) {
	s := storetest.Postgres().New(t, time.Now).(store)
	c, prov := oidcConsole(t, s, web.Config{}, `  - group: payments-owners
    role: owner
    tenants: [acme]
    targets: [payments]
`, oidctest.User{Subject: "ada-1", Name: "Ada Owner", Email: "ada@example.test", Groups: []string{"payments-owners"}},
		oidctest.User{Subject: "ben-2", Name: "Ben Owner", Email: "ben@example.test", Groups: []string{"payments-owners"}})
	ctx := context.Background()
	webhook := func(op ledger.Operation, event, object string) {
		t.Helper()
		if _, err := s.Quarantine(ctx, ledger.QuarantineItem{Target: "payments", Reason: "evidence about an operation under review; attach it to the review",
			EventID: event, Reference: op.RemoteKey, Tenant: "acme", RemoteID: object, OperationID: op.ID, OpTenant: "acme",
			At: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	op, op2 := c.escalated("acme"), c.escalated("acme")
	webhook(op, "evt_q1", "ch_q1")
	webhook(op2, "evt_q2", "ch_q2")
	detail := c.base + escPath(op)

	b, check := visit(t)
	if !js {
		b.DisableJavaScript()
	}
	prov.SignInAs(t, "ada-1")
	if st := b.Navigate(detail); st != http.StatusOK {
		t.Fatalf("escalation: %d", st)
	}
	if b.ScriptsRun() != js {
		t.Fatalf("scripts run: %v, want %v", !js, js)
	}
	if n := b.Count(browsertest.TestID("evidence-row")); n != 2 {
		t.Fatalf("%d pieces of evidence, want 2 (the send's answer and the quarantined webhook)", n)
	}
	if got := b.TextByTestID("answer-match-text"); strings.Contains(got, "shown no object") {
		t.Fatalf("the match answer ignores the evidence: %q", got)
	}
	if got := b.TextByTestID("kind-warning-confirm_not_applied"); !strings.Contains(got, "shows object ch_q1") {
		t.Fatalf("no warning beside confirm not applied: %q", got)
	}
	if got := b.TextByTestID("suggestion"); !strings.HasPrefix(got, "Confirm succeeded with ch_q1 from the quarantined webhook event evt_q1") {
		t.Fatalf("suggestion: %q", got)
	}
	check("evidence")

	b.Click(browsertest.TestID("kind-confirm_not_applied"))
	b.Fill(`input[name="reason"]`, "The customer says the charge failed")
	if st := b.Submit(browsertest.TestID("propose-submit")); st != http.StatusUnprocessableEntity {
		t.Fatalf("not applied against the evidence, unconfirmed: %d", st)
	}
	if got := b.TextByTestID("despite-error"); !strings.Contains(got, "contradicts this proposal") {
		t.Fatalf("the error beside the box: %q", got)
	}
	if n := b.Count(`#despite[aria-invalid="true"][aria-describedby="despite-error"]`); n != 1 {
		t.Fatal("the box is not marked invalid and described by its error")
	}
	if n := b.Count(`#reason[value="The customer says the charge failed"]`); n != 1 {
		t.Fatal("the reason typed is not kept")
	}
	if n := b.Count(`[data-testid="kind-confirm_not_applied"]:checked`); n != 1 {
		t.Fatal("the kind chosen is not kept")
	}
	check("propose-refused")
	b.Click(browsertest.TestID("despite"))
	if st := b.Submit(browsertest.TestID("propose-submit")); st != http.StatusOK {
		t.Fatalf("propose, confirmed: %d", st)
	}
	if n := b.Count(browsertest.TestID("open-proposal")); n != 1 {
		t.Fatal("no open proposal")
	}

	// The suggestion fills the form in, on the second operation.
	if st := b.Navigate(c.base + escPath(op2)); st != http.StatusOK {
		t.Fatalf("second escalation: %d", st)
	}
	if st := b.Submit(browsertest.TestID("suggestion")); st != http.StatusOK {
		t.Fatalf("suggestion: %d", st)
	}
	if n := b.Count(`#remote_ref[value="ch_q2"]`) + b.Count(`[data-testid="kind-confirm_succeeded"]:checked`); n != 2 {
		t.Fatal("the suggestion did not fill the form in")
	}
	if got := b.TextByTestID("unverifiable"); !strings.Contains(got, "settle cannot check this object id") {
		t.Fatalf("unverifiable note: %q", got)
	}
	check("suggestion-filled")
	if st := b.Submit(browsertest.TestID("propose-submit")); st != http.StatusOK {
		t.Fatalf("propose the suggestion: %d", st)
	}
	if st := b.Submit(browsertest.TestID("sign-out")); st != http.StatusOK {
		t.Fatalf("sign-out: %d", st)
	}

	prov.SignInAs(t, "ben-2")
	if st := b.Navigate(detail); st != http.StatusOK {
		t.Fatalf("detail as Ben: %d", st)
	}
	if got := b.TextByTestID("open-warnings"); !strings.Contains(got, "shows object ch_q1") {
		t.Fatalf("the approver is not warned: %q", got)
	}
	check("approve-warned")
	// The box is required in HTML; a request without it, as a script or
	// an old page would send, is refused by the server.
	form := `[data-testid="approve-form"] `
	if st := b.Post(escPath(op)+"/approve", map[string]string{web.CSRFField: b.Attr(form+`input[name="_csrf"]`, "value"),
		"proposal": b.Attr(form+`input[name="proposal"]`, "value")}); st != http.StatusUnprocessableEntity {
		t.Fatalf("approved unconfirmed: %d", st)
	}
	if got := b.TextByTestID("approve-despite-error"); !strings.Contains(got, "contradicts this proposal") {
		t.Fatalf("the approver's error: %q", got)
	}
	check("approve-refused")
	b.Click(browsertest.TestID("approve-despite"))
	if st := b.Submit(browsertest.TestID("approve")); st != http.StatusOK {
		t.Fatalf("approve, confirmed: %d", st)
	}
	if got := b.TextByTestID("status"); got != "Not applied" {
		t.Fatalf("after approval: %q", got)
	}

	if st := b.Navigate(c.base + escPath(op2)); st != http.StatusOK {
		t.Fatalf("second escalation as Ben: %d", st)
	}
	if got := b.TextByTestID("open-unverifiable"); !strings.Contains(got, "cannot check") {
		t.Fatalf("unverifiable: %q", got)
	}
	b.Click(browsertest.TestID("approve-checked"))
	if st := b.Submit(browsertest.TestID("approve")); st != http.StatusOK {
		t.Fatalf("approve the checked object: %d", st)
	}
	check("approved-checked")
	if got, _ := s.Get(ctx, "acme", op2.ID); got.State != ledger.Succeeded || got.RemoteRef != "ch_q2" {
		t.Fatalf("second operation: %s %q", got.State, got.RemoteRef)
	}
}
