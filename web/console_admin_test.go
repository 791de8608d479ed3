package web_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"settle/ledger"
	"settle/web"
)

var secretRe = regexp.MustCompile(`data-testid="secret">([^<]+)<`)

// secretOf reads the secret a response page shows.
func secretOf(t *testing.T, r response) string {
	t.Helper()
	m := secretRe.FindSubmatch(r.body)
	if m == nil {
		t.Fatalf("no secret on the page: %d %s", r.status, r.body)
	}
	return string(m[1])
}

// lockedBuffer collects the server's log across its goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// api calls the client API with a bearer token.
func (c *console) api(secret, path string) int {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, c.base+path, nil)
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// findAction returns the tenant's newest action of kind on object.
func findAction(t *testing.T, acts []ledger.Action, kind ledger.ActionKind, object string) ledger.Action {
	t.Helper()
	for _, a := range acts {
		if a.Kind == kind && a.Object == object {
			return a
		}
	}
	t.Fatalf("no %s action on %s in %+v", kind, object, acts)
	return ledger.Action{}
}

// wantActor checks that an action names the admin who took it and the
// request that carried it.
func wantActor(t *testing.T, a ledger.Action, r response) {
	t.Helper()
	if a.Subject != "demo:ari" || a.Name != "Ari Admin" || a.Role != "admin" || a.RequestID == "" ||
		a.RequestID != r.header.Get("X-Request-Id") {
		t.Fatalf("action %+v, want demo:ari in role admin under request %q", a, r.header.Get("X-Request-Id"))
	}
}

// An admin creates a token: the secret is on that response only (not
// cached, not in a URL, not in the log), works against the API, never
// appears in the listing, and once revoked the API refuses it.
func TestConsoleAdmin_TokenLifecycle(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		var logs lockedBuffer
		c := newConsole(t, open(t), web.Config{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
		b := c.as("admin")
		created := b.do(http.MethodPost, "/admin/tenants/acme/tokens", url.Values{"_csrf": {b.token()}, "name": {"billing service"}})
		if created.status != http.StatusOK || created.header.Get("Cache-Control") != "no-store" || created.header.Get("Location") != "" {
			t.Fatalf("create: %d %v", created.status, created.header)
		}
		secret := secretOf(t, created)
		if !strings.HasPrefix(secret, "stl_") || !testid(created.body, "secret-tenant", "acme") {
			t.Fatalf("secret page: %s", created.body)
		}
		m := regexp.MustCompile(`data-testid="secret-for">(tok_[0-9a-f]+)<`).FindSubmatch(created.body)
		if m == nil {
			t.Fatalf("no token id on the page: %s", created.body)
		}
		id := string(m[1])
		if got := c.api(secret, "/api/v1/operations/"+c.acme.ID); got != http.StatusOK {
			t.Fatalf("the new token against the API: %d", got)
		}
		wantActor(t, findAction(t, c.actions("acme"), ledger.ActionTokenCreate, id), created)

		list := b.get("/admin/tenants/acme")
		if list.status != http.StatusOK || !bytes.Contains(list.body, []byte(`data-testid="token-id">`+id+`<`)) ||
			!testid(list.body, "token-name", "billing service") || !testid(list.body, "token-last-used", "<time") {
			t.Fatalf("listing: %d %s", list.status, list.body)
		}
		if bytes.Contains(list.body, []byte(secret)) || bytes.Contains(list.body, []byte(secret[4:])) {
			t.Fatal("the listing shows the secret")
		}
		if !testid(list.body, "action-who", "Ari Admin (demo:ari)") || !testid(list.body, "action-what", "created API token") {
			t.Fatalf("the listing does not show who created it: %s", list.body)
		}

		// Revoking is confirmed first: the GET changes nothing and says
		// what will happen; a POST without CSRF is refused.
		confirm := b.get("/admin/tenants/acme/tokens/" + id + "/revoke")
		if confirm.status != http.StatusOK || !testid(confirm.body, "confirm-token", "billing service ("+id+")") ||
			!bytes.Contains(confirm.body, []byte("refused (401)")) {
			t.Fatalf("confirm: %d %s", confirm.status, confirm.body)
		}
		if got := c.api(secret, "/api/v1/operations/"+c.acme.ID); got != http.StatusOK {
			t.Fatalf("the token after the confirmation page: %d", got)
		}
		if r := b.do(http.MethodPost, "/admin/tenants/acme/tokens/"+id+"/revoke", url.Values{}); r.status != http.StatusForbidden {
			t.Fatalf("revoke without CSRF: %d", r.status)
		}
		revoked := b.do(http.MethodPost, "/admin/tenants/acme/tokens/"+id+"/revoke", url.Values{"_csrf": {b.token()}})
		if revoked.status != http.StatusSeeOther || revoked.header.Get("Location") != "/admin/tenants/acme" {
			t.Fatalf("revoke: %d %v", revoked.status, revoked.header)
		}
		if got := c.api(secret, "/api/v1/operations/"+c.acme.ID); got != http.StatusUnauthorized {
			t.Fatalf("a revoked token against the API: %d, want 401", got)
		}
		wantActor(t, findAction(t, c.actions("acme"), ledger.ActionTokenRevoke, id), revoked)
		if after := b.get("/admin/tenants/acme"); testid(after.body, "token-revoke", "") {
			t.Fatal("a revoked token is offered for revoking again")
		}
		if strings.Contains(logs.String(), secret[4:]) {
			t.Fatal("the secret reached the log")
		}
	})
}

// Another tenant's token cannot be revoked, whichever tenant the URL
// names: both answer like an unknown token, and the token keeps working.
func TestConsoleAdmin_OtherTenantsTokenIs404(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{})
		secret, tok, err := ledger.NewToken("globex", "test client", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := c.store.CreateToken(adminCtx, tok); err != nil {
			t.Fatal(err)
		}
		b := c.as("admin")
		for _, path := range []string{"/admin/tenants/acme/tokens/" + tok.ID + "/revoke",
			"/admin/tenants/globex/tokens/" + tok.ID + "/revoke", "/admin/tenants/acme/tokens/tok_000000000000/revoke"} {
			if r := b.do(http.MethodPost, path, url.Values{"_csrf": {b.token()}}); r.status != http.StatusNotFound ||
				!testid(r.body, "error-heading", "Not found") {
				t.Fatalf("%s: %d %s", path, r.status, r.body)
			}
		}
		if got := c.api(secret, "/api/v1/operations/"+c.globex.ID); got != http.StatusOK {
			t.Fatalf("globex's token after the attempts: %d", got)
		}
		if r := b.get("/admin/tenants/globex"); r.status != http.StatusNotFound {
			t.Fatalf("another tenant's admin page: %d", r.status)
		}
	})
}

// Setting the callback shows a new signing secret once, and the store
// signs with exactly that text; the tenant page shows the URL, never the
// secret; removing takes it away; a bad URL changes nothing.
func TestConsoleAdmin_Callback(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{})
		ctx := context.Background()
		b := c.as("admin")
		if r := b.get("/admin/tenants/acme"); !testid(r.body, "callback-none", "No callback endpoint") {
			t.Fatalf("no endpoint yet: %s", r.body)
		}
		// The issue's destinations: loopback, the metadata address, plain
		// http, spaces and markup; the same check as the CLI's.
		for _, u := range []string{"ftp://x.example", "https://127.0.0.1:9/cb", "https://169.254.169.254/latest",
			"http://hooks.example.com/acme", "https://hooks.example.com/a b", "https://hooks.example.com/<i>x</i>"} {
			bad := b.do(http.MethodPost, "/admin/tenants/acme/callback", url.Values{"_csrf": {b.token()}, "url": {u}})
			if bad.status != http.StatusUnprocessableEntity || !testid(bad.body, "admin-problem", "callback") {
				t.Fatalf("%s: %d\n%s", u, bad.status, bad.body)
			}
		}

		if _, err := c.callbacks().GetCallback(ctx, "acme"); ledger.ErrorCode(err) != ledger.ENotFound {
			t.Fatalf("a refused URL was stored: %v", err)
		}

		set := b.do(http.MethodPost, "/admin/tenants/acme/callback", url.Values{"_csrf": {b.token()}, "url": {"https://hooks.example.com/acme"}})
		if set.status != http.StatusOK || set.header.Get("Cache-Control") != "no-store" {
			t.Fatalf("set: %d %s", set.status, set.body)
		}
		secret := secretOf(t, set)
		cb, err := c.callbacks().GetCallback(ctx, "acme")
		if err != nil || cb.URL != "https://hooks.example.com/acme" || string(cb.Secret) != secret || !strings.HasPrefix(secret, "scs_") {
			t.Fatalf("stored %+v, %v; shown %q", cb.URL, err, secret)
		}
		wantActor(t, findAction(t, c.actions("acme"), ledger.ActionCallbackSet, "acme"), set)
		if a := findAction(t, c.actions("acme"), ledger.ActionCallbackSet, "acme"); a.Reason != "https://hooks.example.com/acme" {
			t.Fatalf("the set is recorded with %q, want the URL", a.Reason)
		}
		page := b.get("/admin/tenants/acme")
		if !testid(page.body, "callback-url", "https://hooks.example.com/acme") || bytes.Contains(page.body, []byte(secret)) {
			t.Fatalf("tenant page: %s", page.body)
		}

		confirm := b.get("/admin/tenants/acme/callback/remove")
		if confirm.status != http.StatusOK || !testid(confirm.body, "confirm-url", "https://hooks.example.com/acme") {
			t.Fatalf("confirm: %d %s", confirm.status, confirm.body)
		}
		if _, err := c.callbacks().GetCallback(ctx, "acme"); err != nil {
			t.Fatalf("the confirmation page removed the endpoint: %v", err)
		}
		if r := b.do(http.MethodPost, "/admin/tenants/acme/callback/remove", url.Values{}); r.status != http.StatusForbidden {
			t.Fatalf("remove without CSRF: %d", r.status)
		}
		removed := b.do(http.MethodPost, "/admin/tenants/acme/callback/remove", url.Values{"_csrf": {b.token()}})
		if removed.status != http.StatusSeeOther {
			t.Fatalf("remove: %d %s", removed.status, removed.body)
		}
		if _, err := c.callbacks().GetCallback(ctx, "acme"); ledger.ErrorCode(err) != ledger.ENotFound {
			t.Fatalf("after remove: %v", err)
		}
		wantActor(t, findAction(t, c.actions("acme"), ledger.ActionCallbackRemove, "acme"), removed)
		if a := findAction(t, c.actions("acme"), ledger.ActionCallbackRemove, "acme"); a.Reason != "https://hooks.example.com/acme" {
			t.Fatalf("the removal is recorded with %q, want the URL", a.Reason)
		}
		if r := b.get("/admin/tenants/acme"); !bytes.Contains(r.body, []byte("removed the callback endpoint <span class=\"mono\">https://hooks.example.com/acme</span>")) ||
			bytes.Contains(r.body, []byte(secret)) {
			t.Fatalf("recent changes do not name the removed URL: %s", r.body)
		}
		if again := b.do(http.MethodPost, "/admin/tenants/acme/callback/remove", url.Values{"_csrf": {b.token()}}); again.status != http.StatusNotFound {
			t.Fatalf("removing twice: %d", again.status)
		}
	})
}

// Support, owners and managers are refused every admin page and action
// with a valid form, and nothing changes.
func TestConsoleAdmin_OtherRolesForbidden(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{})
		tok := c.issueToken("acme")
		before := len(c.actions("acme"))
		for _, who := range []string{"support", "owner", "manager", "refunds-owner"} {
			b := c.as(who)
			csrf := b.token()
			for _, r := range []response{
				b.get("/admin"),
				b.get("/admin/tenants/acme"),
				b.do(http.MethodPost, "/admin/tenants/acme/tokens", url.Values{"_csrf": {csrf}, "name": {"x"}}),
				b.get("/admin/tenants/acme/tokens/" + tok.ID + "/revoke"),
				b.do(http.MethodPost, "/admin/tenants/acme/tokens/"+tok.ID+"/revoke", url.Values{"_csrf": {csrf}}),
				b.get("/admin/new-tenant?tenant=initech"),
				b.do(http.MethodPost, "/admin/tenants", url.Values{"_csrf": {csrf}, "tenant": {"initech"}}),
				b.get("/admin/tenants/acme/callback/remove"),
				b.do(http.MethodPost, "/admin/tenants/acme/callback", url.Values{"_csrf": {csrf}, "url": {"https://x.example.com/"}}),
				b.do(http.MethodPost, "/admin/tenants/acme/callback/remove", url.Values{"_csrf": {csrf}}),
				b.do(http.MethodPost, "/admin/tenants/acme/callback/retry", url.Values{"_csrf": {csrf}}),
			} {
				if r.status != http.StatusForbidden || !testid(r.body, "error-heading", "Not allowed") {
					t.Fatalf("%s: %d %s", who, r.status, r.body)
				}
			}
			if r := b.get("/operations"); bytes.Contains(r.body, []byte(`href="/admin"`)) {
				t.Fatalf("%s is shown the Admin link", who)
			}
		}
		if after := len(c.actions("acme")); after != before {
			t.Fatalf("refused requests recorded %d actions", after-before)
		}
		if r := c.as("admin").get("/operations"); !bytes.Contains(r.body, []byte(`href="/admin"`)) || !bytes.Contains(r.body, []byte(`href="/targets"`)) {
			t.Fatal("the admin is not shown the Admin and Targets links")
		}
	})
}

// Admin writes need the CSRF token of the admin's own session: none, a
// forged one and a cross-site request are refused and change nothing.
func TestConsoleAdmin_CSRF(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{})
		b := c.as("admin")
		tok := b.token()
		other := c.as("admin").token()
		for name, r := range map[string]response{
			"NoToken":            b.do(http.MethodPost, "/admin/tenants/acme/tokens", url.Values{}),
			"WrongToken":         b.do(http.MethodPost, "/admin/tenants/acme/tokens", url.Values{"_csrf": {"forged"}}),
			"AnotherSession":     b.do(http.MethodPost, "/admin/tenants/acme/tokens", url.Values{"_csrf": {other}}),
			"CrossSiteWithToken": b.do(http.MethodPost, "/admin/tenants/acme/tokens", url.Values{"_csrf": {tok}}, "Sec-Fetch-Site", "cross-site"),
		} {
			if r.status != http.StatusForbidden || secretRe.Match(r.body) {
				t.Errorf("%s: %d %s", name, r.status, r.body)
			}
		}
		if ts, err := c.store.ListTokens(context.Background(), "acme"); err != nil || len(ts) != 0 {
			t.Fatalf("tokens after forged requests: %d, %v", len(ts), err)
		}
	})
}

// The admin page shows the read-only switch as it is, and in read-only
// mode creating a token is refused on the server.
func TestConsoleAdmin_ReadOnlyState(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		for ro, want := range map[bool]string{false: "Off:", true: "On:"} {
			c := newConsole(t, open(t), web.Config{ReadOnly: ro})
			b := c.as("admin")
			r := b.get("/admin")
			if r.status != http.StatusOK || !testid(r.body, "read-only-state", want) || !testid(r.body, "admin-tenant", "acme") {
				t.Fatalf("read-only %v: %d %s", ro, r.status, r.body)
			}
			created := b.do(http.MethodPost, "/admin/tenants/acme/tokens", url.Values{"_csrf": {b.token()}, "name": {"billing service"}})
			if ro && (created.status != http.StatusServiceUnavailable || secretRe.Match(created.body)) {
				t.Fatalf("read-only: create answered %d", created.status)
			}
		}
	})
}

// The tenant page lists the tenant's request parameters, read-only, with
// their values (not secrets), and never another tenant's; the record
// names each parameter changed.
func TestConsoleAdmin_Params(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{})
		b := c.as("admin")
		if r := b.get("/admin/tenants/acme"); r.status != http.StatusOK || !testid(r.body, "params-empty", "This tenant has no request parameters") {
			t.Fatalf("no parameters yet: %d %s", r.status, r.body)
		}
		ps, ok := c.store.(ledger.TenantParamStore)
		if !ok {
			t.Fatal("the store keeps no tenant parameters")
		}
		if err := ps.SetTenantParams(adminCtx, "acme", map[string]string{"account": "acct_acme1", "region": "eu"}, nil, false); err != nil {
			t.Fatal(err)
		}
		if err := ps.SetTenantParams(adminCtx, "globex", map[string]string{"account": "acct_globex9", "other": "x"}, nil, false); err != nil {
			t.Fatal(err)
		}
		r := b.get("/admin/tenants/acme")
		if r.status != http.StatusOK || bytes.Count(r.body, []byte(`data-testid="param-row"`)) != 2 ||
			!testid(r.body, "param-name", "account") || !testid(r.body, "param-value", "acct_acme1") ||
			!bytes.Contains(r.body, []byte(`data-testid="param-value">eu<`)) {
			t.Fatalf("parameters: %d %s", r.status, r.body)
		}
		if bytes.Contains(r.body, []byte("acct_globex9")) || bytes.Contains(r.body, []byte(`>other<`)) {
			t.Fatal("acme's page shows globex's parameters")
		}
		if !testid(r.body, "action-what", "set request parameter <span class=\"mono\">region</span>") {
			t.Fatalf("recent changes: %s", r.body)
		}
		// The page offers no way to change them: the CLI is where the
		// guard's --force is given.
		if bytes.Contains(r.body, []byte(`/params`)) {
			t.Fatal("the page posts to a parameter route")
		}
	})
}
