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

// TestConsole_Browser is a support person's visit in headless Chromium,
// signing in through a real OpenID provider on loopback: they find a
// pending operation by its intent reference, read its story, cannot reach
// another tenant's record or any write, and sign out. Every page is
// checked with axe-core and written as a screenshot.
func TestConsole_Browser(t *testing.T) {
	t.Parallel()
	s := storetest.Postgres().New(t, time.Now).(store)
	c, prov := oidcConsole(t, s, web.Config{}, `  - group: support-acme
    role: support
    tenants: [acme]
`,
		oidctest.User{Subject: "sam-7", Name: "Sam Support", Email: "sam@example.test", Groups: []string{"support-acme"}})
	base := c.base
	pending := c.pending("acme", "inv-1001")
	c.create("acme", "inv-1002")
	other := c.create("globex", "inv-2002")

	b, check := visit(t)

	// Signing in: the console sends an anonymous visitor to the provider
	// and brings them back where they were going.
	prov.SignInAs(t, "sam-7")
	if st := b.Navigate(base + "/operations"); st != http.StatusOK {
		t.Fatalf("operations after sign-in: %d", st)
	}
	if got := b.TextByTestID("user-name"); !strings.Contains(got, "Sam Support") {
		t.Fatalf("signed in as %q, want Sam Support", got)
	}
	check("operations")

	// Finding the pending operation by its intent reference.
	b.Fill(`input[name="q"]`, " INV-1001 ")
	// One operation found: the search opens its page.
	if st := b.Submit(`[data-testid="search-submit"]`); st != http.StatusOK {
		t.Fatalf("search: %d", st)
	}
	if got := b.TextByTestID("operation-name"); got != "inv-1001" {
		t.Fatalf("the search opened %q", got)
	}

	// Its story: the status, what to tell the customer, the send and the
	// lookup.
	if got := b.TextByTestID("status"); got != "Confirmation pending" {
		t.Fatalf("detail status %q", got)
	}
	if got := b.TextByTestID("meaning"); !strings.Contains(got, "do not tell the customer it failed or succeeded") {
		t.Fatalf("meaning %q", got)
	}
	timeline := b.TextByTestID("timeline")
	for _, want := range []string{"Sent to payments (attempt 1)", "settle looked it up at payments",
		"The lookup found no object carrying settle's reference."} {
		if !strings.Contains(timeline, want) {
			t.Errorf("timeline lacks %q:\n%s", want, timeline)
		}
	}
	check("operation")

	// Support has no way to a write: the only form that posts is sign-out.
	if n := b.Count(`form[method="post"]:not([action="/logout"])`); n != 0 {
		t.Fatalf("support is offered %d write forms", n)
	}
	if n := b.Count(`[data-testid="payload"]`); n != 0 {
		t.Fatal("support sees the payload")
	}

	// Another tenant's record is a 404, like one that does not exist.
	if st := b.Navigate(base + "/operations/" + other.Tenant + "/" + other.ID); st != http.StatusNotFound {
		t.Fatalf("another tenant's operation: %d, want 404", st)
	}
	check("other-tenant")
	if b.Navigate(base+"/operations/"+pending.Tenant+"/"+pending.ID) != http.StatusOK {
		t.Fatal("back to the operation")
	}

	// A post without the CSRF token is refused, signed in or not.
	if st := b.Post("/logout", nil); st != http.StatusForbidden {
		t.Fatalf("sign-out without the CSRF token: %d, want 403", st)
	}
	check("forged-post")
	if st := b.Navigate(base + "/operations"); st != http.StatusOK {
		t.Fatalf("the forged post ended the session: %d", st)
	}

	// Sign-out ends the session: the console asks for sign-in again.
	if st := b.Submit(`[data-testid="sign-out"]`); st != http.StatusOK {
		t.Fatalf("sign-out: %d", st)
	}
	if got := b.TextByTestID("sign-in-notice"); got != "You have signed out." {
		t.Fatalf("after sign-out: %q", got)
	}
	check("signed-out")
	b.Navigate(base + "/operations")
	if n := b.Count(`[data-testid="user-name"]`); n != 0 {
		t.Fatal("still signed in after sign-out")
	}
}

// oidcConsole is a console on loopback over s whose only way in is a real
// OpenID provider (mockoidc, started here) knowing users; bindings is the
// YAML list of the console config's role bindings. cfg's Store, Browser,
// Tokens, SignIn and InsecureCookies are set here; Targets defaults to the
// test targets.
func oidcConsole(t *testing.T, s store, cfg web.Config, bindings string, users ...oidctest.User) (*console, *oidctest.Provider) {
	t.Helper()
	prov := oidctest.Start(t, users...)
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
%s`, prov.Issuer, prov.ClientID, base, bindings)
	env := map[string]string{"OIDC_SECRET": prov.ClientSecret, "SESSION_KEY": strings.Repeat("k", 32)}
	ac, err := auth.ParseConfig("console.yaml", []byte(config), func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	// One log for sign-in and the server, checked for the OIDC client
	// secret and the session key when the test ends.
	log := leakCheckedLog(t, prov.ClientSecret, env["SESSION_KEY"])
	signIn, err := auth.NewConsole(context.Background(), ac, s, auth.WithRender(web.RenderSignIn),
		auth.WithListenAddr(addr), auth.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Store, cfg.SignIn, cfg.InsecureCookies = s, signIn, true
	if cfg.Logger == nil {
		cfg.Logger = log
	}
	if cfg.Targets == nil {
		cfg.Targets = consoleTargets{testTargets}
	}
	srv.Config.Handler = web.New(cfg)
	srv.Start()
	t.Cleanup(srv.Close)
	knownTenants(t, s, "acme", "globex")
	return &console{t: t, base: base, store: s}, prov
}

// visit starts a headless Chromium for t; check writes a screenshot of the
// page it is on and requires axe-core to find nothing.
func visit(t *testing.T) (b *browsertest.Browser, check func(page string)) {
	t.Helper()
	b = browsertest.New(t)
	return b, func(page string) {
		t.Helper()
		b.Screenshot(page)
		b.RequireAccessible()
	}
}
