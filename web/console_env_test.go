package web_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"settle/auth"
	"settle/ledger"
	"settle/web"
)

// The console tests sign in through testSignIn: a cookie names one of a few
// fixed principals, each bound to tenant "acme" only, so that "globex" is
// always another tenant.
var principals = map[string]*auth.Principal{
	"support": {Subject: "demo:sam", Name: "Sam Support", Bindings: []auth.Binding{{Role: auth.Support, Tenants: []string{"acme"}}}},
	"owner": {Subject: "demo:olu", Name: "Olu Owner", Bindings: []auth.Binding{
		{Role: auth.Owner, Tenants: []string{"acme"}, Targets: []string{"payments"}}}},
	// A second owner of the same target, for the two-person rule.
	"owner-b": {Subject: "demo:bea", Name: "Bea Owner", Bindings: []auth.Binding{
		{Role: auth.Owner, Tenants: []string{"acme"}, Targets: []string{"payments"}}}},
	"manager": {Subject: "demo:mia", Name: "Mia Manager", Bindings: []auth.Binding{{Role: auth.Manager, Tenants: []string{"acme"}}}},
	"admin":   {Subject: "demo:ari", Name: "Ari Admin", Bindings: []auth.Binding{{Role: auth.Admin, Tenants: []string{"acme"}}}},
	// An administrator of every tenant: the only one who creates tenants.
	"admin-all": {Subject: "demo:ada", Name: "Ada Admin", Bindings: []auth.Binding{{Role: auth.Admin}}},
	"none":      {Subject: "demo:nia", Name: "Nia Nobody"},
	// An owner of another target of the same tenant: reads the story,
	// never the payload.
	"refunds-owner": {Subject: "demo:rio", Name: "Rio Refunds", Bindings: []auth.Binding{
		{Role: auth.Owner, Tenants: []string{"acme"}, Targets: []string{"refunds"}}}},
}

const asCookie = "test_as"

// testSignIn stands in for package auth: /login says who to be, /logout
// forgets, and the middleware reads the test cookie.
type testSignIn struct{}

func (testSignIn) Register(e *echo.Echo) {
	e.GET("/login", func(c echo.Context) error { return c.String(http.StatusOK, "sign in") })
	e.POST("/logout", func(c echo.Context) error {
		c.SetCookie(&http.Cookie{Name: asCookie, Path: "/", MaxAge: -1})
		return c.Redirect(http.StatusSeeOther, "/login")
	})
}

func (testSignIn) Middleware() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if k, err := c.Cookie(asCookie); err == nil && principals[k.Value] != nil {
				r := c.Request()
				c.SetRequest(r.WithContext(auth.NewContext(r.Context(), principals[k.Value])))
			}
			return next(c)
		}
	}
}

// browsing is the real store, except that counting by the target "boom"
// fails with an internal error that must never reach the page.
type browsing struct{ store }

func (b browsing) CountByState(ctx context.Context, f ledger.ListFilter) (ledger.StateCounts, error) {
	if f.Target == "boom" {
		return ledger.StateCounts{}, errors.New("boom: internal detail that must never be shown")
	}
	return b.store.CountByState(ctx, f)
}

// consoleTargets also lists its names, for the target filter.
type consoleTargets struct{ targets }

func (t consoleTargets) Names() []string { return []string{"payments"} }

// console is one settle server with the console on, over a real store,
// with an operation of each tenant: acme's is UNKNOWN after a timeout and
// a lookup that found nothing; globex's is PREPARED.
type console struct {
	t      *testing.T
	base   string
	store  store
	acme   ledger.Operation
	globex ledger.Operation
}

const secretField = "secret-sauce-7781"

// leakCheckedLog is a console test's logger: every line, at every level,
// is kept and checked when the test ends, after its server has closed
// (cleanups run last-registered first) (invariant 8): no payload
// (secretField), API token (stl_), callback secret (scs_), Authorization
// header or CSRF cookie, nor any of secrets.
func leakCheckedLog(t *testing.T, secrets ...string) *slog.Logger {
	logs := &lockedBuffer{}
	t.Cleanup(func() {
		log := logs.String()
		for _, s := range append([]string{secretField, "stl_", "scs_", "Bearer ", "settle_csrf="}, secrets...) {
			if strings.Contains(log, s) {
				t.Errorf("the console's log holds %q:\n%s", s, log)
			}
		}
	})
	return slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func newConsole(t *testing.T, s store, cfg web.Config) *console {
	t.Helper()
	b := browsing{s}
	cfg.Store, cfg.SignIn = b, testSignIn{}
	cfg.Targets = consoleTargets{testTargets}
	if cfg.Contracts == nil {
		cfg.Contracts = testContracts(t)
	}
	if !cfg.InsecureCookies {
		cfg.InsecureCookies = true // httptest serves plain HTTP
	}
	if cfg.Logger == nil {
		cfg.Logger = leakCheckedLog(t)
	}
	srv := httptest.NewServer(web.New(cfg))
	t.Cleanup(srv.Close)
	c := &console{t: t, base: srv.URL, store: s}
	knownTenants(t, s, "acme", "globex")
	c.acme = c.pending("acme", "inv-1001")
	c.globex = c.create("globex", "inv-2002")
	return c
}

func (c *console) create(tenant, intent string) ledger.Operation {
	c.t.Helper()
	op, _, err := c.store.Create(context.Background(), ledger.NewOperation{Tenant: tenant, Type: "charge", IntentRef: intent,
		Target: "payments", Payload: []byte(`{"amount":100,"note":"` + secretField + `"}`), RetryWindow: 24 * time.Hour})
	if err != nil {
		c.t.Fatal(err)
	}
	return op
}

// pending creates an operation and takes it to UNKNOWN the way the
// executor and the reconciler do: a send that timed out, then a lookup
// that found nothing yet.
func (c *console) pending(tenant, intent string) ledger.Operation {
	c.t.Helper()
	ctx := context.Background()
	op := c.create(tenant, intent)
	held, err := c.store.Claim(ctx, tenant, op.ID, op.PayloadHash, time.Minute)
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.store.Record(ctx, ledger.Outcome{Tenant: tenant, OperationID: op.ID, Fence: held.Fence,
		From: ledger.InFlight, To: ledger.Unknown, Actor: ledger.ActorExecutor, Reason: "no response: timeout",
		Evidence: map[string]any{"failure": "timeout"}}); err != nil {
		c.t.Fatal(err)
	}
	leased, err := c.store.LeaseUnknown(ctx, 10, time.Minute)
	if err != nil || len(leased) != 1 {
		c.t.Fatalf("lease: %v %d", err, len(leased))
	}
	next := time.Now().Add(time.Hour)
	op, err = c.store.Record(ctx, ledger.Outcome{Tenant: tenant, OperationID: op.ID, Fence: leased[0].Fence,
		From: ledger.Unknown, To: ledger.Unknown, Actor: ledger.ActorReconciler, NextAt: &next,
		Reason:   "not found yet; absence alone proves nothing",
		Evidence: map[string]any{"via": "lookup", "status": 200, "results": 0}})
	if err != nil {
		c.t.Fatal(err)
	}
	return op
}

// browser is one person's client: a cookie jar, no redirects followed.
type browser struct {
	c      *console
	client *http.Client
}

func (c *console) as(who string) *browser {
	c.t.Helper()
	jar, _ := cookiejar.New(nil)
	if who != "" {
		u, _ := url.Parse(c.base)
		jar.SetCookies(u, []*http.Cookie{{Name: asCookie, Value: who, Path: "/"}})
	}
	return &browser{c: c, client: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browser) do(method, path string, form url.Values, header ...string) response {
	b.c.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.c.base+path, body)
	if err != nil {
		b.c.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := b.client.Do(req)
	if err != nil {
		b.c.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: data}
}

func (b *browser) get(path string) response { b.c.t.Helper(); return b.do(http.MethodGet, path, nil) }

var regexpNext = regexp.MustCompile(`href="([^"]+)" rel="next"`)

var csrfRe = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)

// csrfCookie is the CSRF token from the cookie a public page sets: it
// works for anonymous and role-less people too, who have no form to read.
func (b *browser) csrfCookie() string {
	b.c.t.Helper()
	b.get("/login")
	u, _ := url.Parse(b.c.base)
	for _, k := range b.client.Jar.Cookies(u) {
		if k.Name == "settle_csrf" {
			return k.Value
		}
	}
	b.c.t.Fatal("no CSRF cookie")
	return ""
}

// token reads the CSRF token from a page's sign-out form.
func (b *browser) token() string {
	b.c.t.Helper()
	r := b.get("/operations")
	m := csrfRe.FindSubmatch(r.body)
	if m == nil {
		b.c.t.Fatalf("no CSRF token on the page: %s", r.body)
	}
	return string(m[1])
}

func (c *console) opPath(op ledger.Operation) string { return "/operations/" + op.Tenant + "/" + op.ID }

// testid reports whether the page has an element with the data-testid
// whose text starts with text.
func testid(body []byte, id, text string) bool {
	s := string(body)
	i := strings.Index(s, `data-testid="`+id+`"`)
	if i < 0 {
		return false
	}
	rest := s[i:]
	return strings.HasPrefix(rest[strings.Index(rest, ">")+1:], text)
}
