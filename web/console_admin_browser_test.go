package web_test

import (
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"settle/auth/oidctest"
	"settle/ledger"
	"settle/ledger/storetest"
	"settle/web"
)

// An administrator of tenant acme, signed in through a real OpenID
// provider in headless Chromium, reads a target's contract, creates an API
// token (its secret shown once and working against the API), revokes it
// and sets the tenant's callback endpoint, and reads its request
// parameters. Every page passes axe-core and
// is written as a screenshot.
func TestConsoleAdmin_Browser(t *testing.T) {
	t.Parallel()
	s := storetest.Postgres().New(t, time.Now).(store)
	// The Targets pages show the go/no-go gate, which axe checks too.
	// Test deliveries go to a receiver on loopback, which the deployment's
	// policy lets through (as settle serve --callbacks-allow-* would).
	policy := ledger.CallbackPolicy{AllowHTTP: true, Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
	c, prov := oidcConsole(t, s, web.Config{Contracts: testContracts(t), CallbackPolicy: policy}, `  - group: admin-acme
    role: admin
    tenants: [acme]
`,
		oidctest.User{Subject: "ari-1", Name: "Ari Admin", Email: "ari@example.test", Groups: []string{"admin-acme"}})
	base := c.base
	op := c.create("acme", "inv-3003")
	// The tenant page shows its request parameters, which axe checks too.
	if err := s.(ledger.TenantParamStore).SetTenantParams(adminCtx, "acme", map[string]string{"account": "acct_1Nv0FG"}, nil, false); err != nil {
		t.Fatal(err)
	}

	b, check := visit(t)
	prov.SignInAs(t, "ari-1")
	if st := b.Navigate(base + "/targets"); st != http.StatusOK {
		t.Fatalf("targets: %d", st)
	}
	check("targets")
	if st := b.Submit(`[data-testid="target-link"]`); st != http.StatusOK {
		t.Fatalf("target: %d", st)
	}
	if got := b.TextByTestID("class-A"); !strings.Contains(got, "Same-key replay") {
		t.Fatalf("class A reads %q", got)
	}
	if got := b.TextByTestID("gonogo-verdict"); !strings.HasPrefix(got, "NO-GO") || b.Count(`[data-testid="control-row"]`) != 11 {
		t.Fatalf("go/no-go reads %q with %d controls", got, b.Count(`[data-testid="control-row"]`))
	}
	check("target")

	if st := b.Navigate(base + "/admin"); st != http.StatusOK {
		t.Fatalf("admin: %d", st)
	}
	check("admin")
	if st := b.Submit(`[data-testid="admin-tenant"]`); st != http.StatusOK {
		t.Fatalf("tenant: %d", st)
	}
	if n := b.Count(`[data-testid="param-row"]`); n != 1 || b.TextByTestID("param-value") != "acct_1Nv0FG" {
		t.Fatalf("parameters: %d rows, value %q", n, b.TextByTestID("param-value"))
	}
	check("admin-tenant")
	// A token needs a name: the browser's own check stops an empty one,
	// the server's a blank one, keeping the page and saying why.
	b.Fill(`[data-testid="token-name-input"]`, "   ")
	if st := b.Submit(`[data-testid="token-create"]`); st != http.StatusUnprocessableEntity {
		t.Fatalf("create a token named only spaces: %d", st)
	}
	if got := b.TextByTestID("token-name-problem"); !strings.Contains(got, "Give the token a name") {
		t.Fatalf("the refusal reads %q", got)
	}
	check("token-name-refused")
	b.Fill(`[data-testid="token-name-input"]`, "billing service, production")
	if st := b.Submit(`[data-testid="token-create"]`); st != http.StatusOK {
		t.Fatalf("create token: %d", st)
	}
	secret := b.TextByTestID("secret")
	if !strings.HasPrefix(secret, "stl_") {
		t.Fatalf("secret %q", secret)
	}
	check("token-created")
	if got := c.api(secret, "/api/v1/operations/"+op.ID); got != http.StatusOK {
		t.Fatalf("the new token against the API: %d", got)
	}
	if st := b.Submit(`[data-testid="back"]`); st != http.StatusOK {
		t.Fatalf("back: %d", st)
	}
	if n := b.Count(`[data-testid="token-row"]`); n != 1 || strings.Contains(b.Text("main"), secret) {
		t.Fatalf("listing: %d rows, secret shown %v", n, strings.Contains(b.Text("main"), secret))
	}
	if got := b.TextByTestID("token-name"); got != "billing service, production" {
		t.Fatalf("token name %q", got)
	}
	if got := b.TextByTestID("token-last-used"); got == "never" || got == "" {
		t.Fatalf("last used %q after a request", got)
	}
	check("token-listed")
	// Revoking is confirmed on its own page first.
	if st := b.Submit(`[data-testid="token-revoke"]`); st != http.StatusOK {
		t.Fatalf("revoke: %d", st)
	}
	if got := b.Text("h1"); !strings.Contains(got, "Revoke the token “billing service, production”?") {
		t.Fatalf("confirmation heading %q", got)
	}
	check("token-revoke-confirm")
	if got := c.api(secret, "/api/v1/operations/"+op.ID); got != http.StatusOK {
		t.Fatalf("the token while its revocation awaits confirmation: %d", got)
	}
	if st := b.Submit(`[data-testid="confirm-revoke"]`); st != http.StatusOK {
		t.Fatalf("confirm revoke: %d", st)
	}
	if got := c.api(secret, "/api/v1/operations/"+op.ID); got != http.StatusUnauthorized {
		t.Fatalf("the revoked token against the API: %d", got)
	}
	b.Fill(`[data-testid="callback-url-input"]`, "https://hooks.example.com/acme")
	if st := b.Submit(`[data-testid="callback-set"]`); st != http.StatusOK {
		t.Fatalf("set callback: %d", st)
	}
	if got := b.TextByTestID("secret"); !strings.HasPrefix(got, "scs_") {
		t.Fatalf("callback secret %q", got)
	}
	check("callback-set")

	// A notification given up after the bound on attempts is listed with
	// a button that sends it again.
	c.escalated("acme")
	ns, err := c.callbacks().ClaimNotifications(adminCtx, 10, time.Minute)
	if err != nil || len(ns) != 1 {
		t.Fatalf("claim = %+v, %v", ns, err)
	}
	if err := c.callbacks().GiveUpNotification(adminCtx, ns[0].ID, 503, "endpoint answered 503", time.Now()); err != nil {
		t.Fatal(err)
	}
	if st := b.Submit(`[data-testid="back"]`); st != http.StatusOK {
		t.Fatalf("back: %d", st)
	}
	if got := b.TextByTestID("callback-given-up-count"); !strings.HasPrefix(got, "1 notification(s) given up") {
		t.Fatalf("given up reads %q", got)
	}
	if got := b.TextByTestID("callback-last-attempt"); !strings.HasSuffix(got, "answered 503: not delivered") {
		t.Fatalf("the last attempt reads %q", got)
	}
	if got := b.TextByTestID("callback-failures"); got != "1 failed attempt since the endpoint was set" {
		t.Fatalf("the failures read %q", got)
	}
	check("callback-given-up")
	if st := b.Submit(`[data-testid="callback-retry"]`); st != http.StatusOK {
		t.Fatalf("retry: %d", st)
	}
	if n := b.Count(`[data-testid="callback-given-up-count"]`); n != 0 {
		t.Fatal("given-up notifications still listed after the retry")
	}
	if got := b.Text("main"); !strings.Contains(got, "sent the given-up callback notifications again") {
		t.Fatalf("the retry is not among the recent changes: %s", got)
	}
	check("callback-retried")

	// A test delivery reaches the endpoint, signed, and the page says how
	// it answered.
	rcv := newReceiver(t)
	if err := c.callbacks().SetCallback(adminCtx, "acme", rcv.URL+"/acme", []byte(strings.Repeat("k", 32)), time.Now()); err != nil {
		t.Fatal(err)
	}
	if st := b.Navigate(base + "/admin/tenants/acme"); st != http.StatusOK {
		t.Fatalf("tenant: %d", st)
	}
	if st := b.Submit(`[data-testid="callback-test"]`); st != http.StatusOK {
		t.Fatalf("test delivery: %d", st)
	}
	if got := b.TextByTestID("callback-test-result"); !strings.HasPrefix(got, "Test delivery: the endpoint answered 204 in ") {
		t.Fatalf("the test delivery reads %q", got)
	}
	if req, _ := rcv.last(t); req.URL.Path != "/acme" {
		t.Fatalf("the test went to %s", req.URL.Path)
	}
	check("callback-tested")

	// Removing the endpoint is confirmed on its own page first.
	if st := b.Submit(`[data-testid="callback-remove"]`); st != http.StatusOK {
		t.Fatalf("remove: %d", st)
	}
	if got := b.TextByTestID("confirm-url"); got != rcv.URL+"/acme" {
		t.Fatalf("the confirmation names %q", got)
	}
	check("callback-remove-confirm")
	if st := b.Submit(`[data-testid="confirm-remove-callback"]`); st != http.StatusOK {
		t.Fatalf("confirm remove: %d", st)
	}
	if n := b.Count(`[data-testid="callback-none"]`); n != 1 {
		t.Fatal("the endpoint is still shown after its removal")
	}
}
