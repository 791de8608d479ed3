package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"settle/auth"
	"settle/auth/oidctest"
	"settle/ledger/storetest"
	"settle/web"
	"settle/web/browsertest"
)

// TestConsole_ReviewBrowser is an owner's review in headless Chromium,
// signed in through a real OpenID provider: they link a quarantined event
// to the tenant's pending operation through the form, acknowledge an audit
// finding with a note, and read both on the operation's pages. Every page
// is checked with axe-core and written as a screenshot.
func TestConsole_ReviewBrowser(t *testing.T) {
	t.Parallel()
	s := storetest.Postgres().New(t, time.Now).(store)
	prov := oidctest.Start(t, oidctest.User{Subject: "olu-3", Name: "Olu Owner", Email: "olu@example.test",
		Groups: []string{"payments-acme"}})
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
  - group: payments-acme
    role: owner
    tenants: [acme]
    targets: [payments]
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
		Targets: consoleTargets{testTargets}, InsecureCookies: true})
	srv.Start()
	t.Cleanup(srv.Close)

	c := &console{t: t, base: base, store: s}
	pending := c.pending("acme", "inv-1001")
	item := strconv.FormatInt(c.quarantined("acme"), 10)
	f := c.finding("acme")

	b := browsertest.New(t)
	check := func(page string) {
		t.Helper()
		b.Screenshot(page)
		b.RequireAccessible()
	}
	prov.SignInAs(t, "olu-3")
	if st := b.Navigate(base + "/quarantine"); st != http.StatusOK {
		t.Fatalf("quarantine: %d", st)
	}
	check("quarantine")

	// A link without a reason is refused by the browser's own check; one
	// to a reference the tenant does not have is refused by the server.
	b.Fill("#link-op-"+item, "inv-9999")
	b.Fill("#link-reason-"+item, "the event's metadata carries our reference")
	if st := b.Submit(`[data-testid="link-submit"]`); st != http.StatusUnprocessableEntity {
		t.Fatalf("link to an unknown reference: %d, want 422", st)
	}
	if got := b.TextByTestID("problem"); !strings.Contains(got, "No operation of tenant acme") {
		t.Fatalf("problem %q", got)
	}
	check("quarantine-problem")
	b.Fill("#link-op-"+item, "inv-1001")
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
