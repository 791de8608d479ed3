package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"settle/auth"
	"settle/auth/oidctest"
	"settle/ledger/storetest"
	"settle/web"
	"settle/web/browsertest"
)

// An administrator of tenant acme, signed in through a real OpenID
// provider in headless Chromium, reads a target's contract, creates an API
// token (its secret shown once and working against the API), revokes it
// and sets the tenant's callback endpoint. Every page passes axe-core and
// is written as a screenshot.
func TestConsoleAdmin_Browser(t *testing.T) {
	t.Parallel()
	s := storetest.Postgres().New(t, time.Now).(store)
	prov := oidctest.Start(t, oidctest.User{Subject: "ari-1", Name: "Ari Admin", Email: "ari@example.test",
		Groups: []string{"admin-acme"}})
	srv := httptest.NewUnstartedServer(nil)
	addr := srv.Listener.Addr().String()
	base := "http://" + addr
	config := fmt.Sprintf(`oidc:
  issuer: %s
  client_id: %s
  client_secret_env: OIDC_SECRET
  redirect_url: %s/auth/callback
  scopes: [openid, profile, email, groups]
session:
  key_env: SESSION_KEY
  insecure_cookie: true
bindings:
  - group: admin-acme
    role: admin
    tenants: [acme]
`, prov.Issuer, prov.ClientID, base)
	env := map[string]string{"OIDC_SECRET": prov.ClientSecret, "SESSION_KEY": strings.Repeat("k", 32)}
	cfg, err := auth.ParseConfig("console.yaml", []byte(config), func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	signIn, err := auth.NewConsole(context.Background(), cfg, s, auth.WithRender(web.RenderSignIn), auth.WithListenAddr(addr))
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = web.New(web.Config{Store: s, Browser: s, Tokens: s, SignIn: signIn,
		Targets: consoleTargets{testTargets}, Contracts: testContracts(t), InsecureCookies: true})
	srv.Start()
	t.Cleanup(srv.Close)
	c := &console{t: t, base: base, store: s}
	op := c.create("acme", "inv-3003")

	b := browsertest.New(t)
	check := func(page string) {
		t.Helper()
		b.Screenshot(page)
		b.RequireAccessible()
	}
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
	check("target")

	if st := b.Navigate(base + "/admin"); st != http.StatusOK {
		t.Fatalf("admin: %d", st)
	}
	check("admin")
	if st := b.Submit(`[data-testid="admin-tenant"]`); st != http.StatusOK {
		t.Fatalf("tenant: %d", st)
	}
	check("admin-tenant")
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
	if st := b.Submit(`[data-testid="token-revoke"]`); st != http.StatusOK {
		t.Fatalf("revoke: %d", st)
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
}
