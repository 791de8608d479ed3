package views

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/a-h/templ"
)

func render(t *testing.T, c templ.Component) string {
	t.Helper()
	var b bytes.Buffer
	if err := c.Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// has asserts that the page holds an element with data-testid id whose
// text starts with text ("" checks only that it exists).
func has(t *testing.T, page, id, text string) {
	t.Helper()
	marker := `data-testid="` + id + `"`
	i := strings.Index(page, marker)
	if i < 0 {
		t.Fatalf("no data-testid=%q in:\n%s", id, page)
	}
	if text == "" {
		return
	}
	rest := page[i:]
	body := rest[strings.Index(rest, ">")+1:]
	if !strings.HasPrefix(body, text) {
		t.Fatalf("data-testid=%q holds %.80q, want it to start with %q", id, body, text)
	}
}

// No component writes inline script or style: the CSP forbids both.
func noInline(t *testing.T, page string) {
	t.Helper()
	for _, bad := range []string{"<style", "style=", "<script>", "onclick", "javascript:"} {
		if strings.Contains(page, bad) {
			t.Fatalf("inline %q found", bad)
		}
	}
}

var layout = Layout{Title: "Operations", User: &User{Name: "Ada", Roles: "support (acme)"}, CSRF: "tok",
	Nav: []Link{{Label: "Operations", Href: "/operations", Current: true}}, ServedIn: "3 ms"}

func TestLayout_SignedInHeader(t *testing.T) {
	t.Parallel()
	page := render(t, NoRole(layout))
	has(t, page, "user-name", "Ada")
	has(t, page, "user-roles", "support (acme)")
	has(t, page, "sign-out", "Sign out")
	has(t, page, "served-in", "served in 3 ms")
	has(t, page, "no-role", "You have no role")
	for _, want := range []string{`<a class="skip" href="#main">`, `<main id="main"`, `action="/logout"`,
		`name="_csrf" value="tok"`, `aria-current="page"`, `<html lang="en">`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	noInline(t, page)
}

func TestOperations(t *testing.T) {
	t.Parallel()
	v := OperationsPage{Layout: layout, Heading: "Operations", Query: "inv-1",
		States: []Option{{Value: "", Label: "Any state"}, {Value: "UNKNOWN", Label: "Confirmation pending", Selected: true}},
		Tabs:   []Tab{{ID: "all", Label: "All", Count: "10,000+", Href: "/operations"}, {ID: "UNKNOWN", Label: "Confirmation pending", Count: "3", Href: "/operations?state=UNKNOWN", Current: true}},
		Rows: []OperationRow{{ID: "op1", Href: "/operations/acme/op1", Tenant: "acme", IntentRef: "inv-1", State: "UNKNOWN",
			Status: "Confirmation pending", Created: Time{ISO: "2026-12-01T03:00:00Z", UTC: "2026-12-01 03:00:00 UTC", Relative: "3 min ago"}}},
		Next: "/operations?cursor=abc",
	}
	page := render(t, Operations(v))
	has(t, page, "operations-heading", "Operations")
	has(t, page, "search-input", "")
	has(t, page, "count-all", "10,000+")
	has(t, page, "count-UNKNOWN", "3")
	has(t, page, "row-status", "Confirmation pending")
	has(t, page, "row-link", "inv-1")
	has(t, page, "next-page", "Older operations")
	for _, want := range []string{`<label for="q">`, `id="q" name="q" value="inv-1"`, `<th scope="col">Status</th>`,
		`<option value="UNKNOWN" selected>`, `<time datetime="2026-12-01T03:00:00Z" title="2026-12-01 03:00:00 UTC" data-relative>3 min ago</time>`,
		`method="get" action="/operations"`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	noInline(t, page)

	empty := render(t, Operations(OperationsPage{Layout: layout, Heading: "Operations", Empty: "Nothing.", Problem: "Bad filter."}))
	has(t, empty, "empty", "Nothing.")
	has(t, empty, "filter-problem", "Bad filter.")
}

func TestOperation(t *testing.T) {
	t.Parallel()
	v := OperationPage{Layout: layout, ID: "op1", State: "UNKNOWN", Status: "Confirmation pending",
		Meaning: "Confirmation pending — do not tell the customer it failed or succeeded.", Tone: "warn", Back: "/operations",
		Refs:        []Ref{{ID: "operation-id", Label: "Operation id", Shown: Shown{Text: "op1"}}},
		Facts:       []Fact{{ID: "owner", Label: "Owning team", Value: "Payments team"}},
		Events:      []Event{{Kind: "lookup", Title: "settle looked it up at payments", By: "settle's reconciler", Lines: []string{"The lookup found no object."}}},
		PayloadNote: "Shown only to owners.",
	}
	page := render(t, Operation(v))
	has(t, page, "status", "Confirmation pending")
	has(t, page, "meaning", "Confirmation pending — do not tell the customer")
	has(t, page, "ref-operation-id", "op1")
	has(t, page, "fact-owner", "Payments team")
	has(t, page, "event-title", "settle looked it up at payments")
	has(t, page, "event-line", "The lookup found no object.")
	has(t, page, "payload-note", "Shown only to owners.")
	if strings.Contains(page, `data-testid="payload"`) {
		t.Fatal("payload rendered though not shown")
	}
	if !strings.Contains(page, `data-copy="op1" hidden`) {
		t.Error("copy button missing or not hidden until the script runs")
	}
	noInline(t, page)

	v.PayloadShown, v.Payload = true, `{"amount": 100}`
	has(t, render(t, Operation(v)), "payload", `{&#34;amount&#34;: 100}`)
}

func TestSignIn(t *testing.T) {
	t.Parallel()
	page := render(t, SignIn(SignInPage{Demo: true, Return: "/operations?q=x", CSRF: "tok", Error: "Try again.",
		Users: []DemoUser{{ID: "sam", Name: "Sam Support", Description: "support, acme"}}}))
	has(t, page, "demo-notice", "Demo mode")
	has(t, page, "demo-user-sam", "")
	has(t, page, "sign-in-error", "Try again.")
	for _, want := range []string{`action="/login/demo"`, `name="user" value="sam"`, `name="return" value="/operations?q=x"`, `name="_csrf" value="tok"`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if strings.Contains(page, `data-testid="signed-in"`) {
		t.Error("sign-in page shows a signed-in header")
	}
	oidc := render(t, SignIn(SignInPage{StartURL: "/login?start=1"}))
	has(t, oidc, "sign-in-oidc", "Sign in with your organisation")
	noInline(t, page)
}

func TestError(t *testing.T) {
	t.Parallel()
	page := render(t, Error(ErrorPage{Layout: layout, Status: 500, Heading: "Something went wrong", Message: "Nothing was changed.", RequestID: "r1"}))
	has(t, page, "error-heading", "Something went wrong")
	has(t, page, "error-status", "Error 500")
	has(t, page, "request-id", "r1")
	nf := render(t, Error(ErrorPage{Layout: layout, Status: 404, Heading: "Not found", Message: "Nothing here."}))
	if strings.Contains(nf, "request-id") {
		t.Error("a 404 shows a request id")
	}
}
