package auth_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"settle/auth"
	"settle/auth/oidctest"
	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/storetest"
)

// The provider's people: Ada and Grace have groups the config binds; Eve's
// group is bound to nothing.
var (
	ada   = oidctest.User{Subject: "ada-sub", Name: "Ada Lovelace", Email: "ada@example.com", Groups: []string{"settle-support", "other"}}
	grace = oidctest.User{Subject: "grace-sub", Name: "Grace Hopper", Email: "grace@example.com", Groups: []string{"payments-owners"}}
	eve   = oidctest.User{Subject: "eve-sub", Name: "Eve", Email: "eve@example.com", Groups: []string{"marketing"}}
)

var testRules = []auth.BindingRule{
	{Group: "settle-support", Role: auth.Support, Tenants: []string{"acme"}},
	{Group: "payments-owners", Role: auth.Owner, Targets: []string{"payments"}},
}

// env is one console behind a TLS test server, its provider, its store
// and a browser-like client (cookie jar, redirects not followed).
type env struct {
	t        *testing.T
	clk      *ledgertest.Clock
	ss       ledger.SessionStore
	provider *oidctest.Provider
	console  *auth.Console
	srv      *httptest.Server
	client   *http.Client
}

// whoami is what the test route answers for a signed-in principal.
type whoami struct {
	Subject, Name, Email string
	Roles                []string
}

func newEnv(t *testing.T, h ledgertest.Harness) *env {
	t.Helper()
	return newEnvWith(t, h, oidctest.Start(t, ada, grace, eve))
}

// newEnvWith is newEnv with the provider p (running or not) and options.
func newEnvWith(t *testing.T, h ledgertest.Harness, p *oidctest.Provider, opts ...auth.Option) *env {
	t.Helper()
	t.Parallel()
	clk := ledgertest.NewClock()
	ss := h.New(t, clk.Now).(ledger.SessionStore)
	var handler http.Handler
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	cfg := auth.Config{
		OIDC: auth.OIDCConfig{Issuer: p.Issuer, ClientID: p.ClientID, ClientSecret: p.ClientSecret,
			RedirectURL: srv.URL + auth.CallbackPath, Scopes: auth.DefaultScopes, RolesClaim: "groups", NameClaim: "name"},
		Bindings: testRules,
		Session:  auth.SessionConfig{Absolute: auth.DefaultAbsolute, Idle: auth.DefaultIdle, Key: []byte(strings.Repeat("k", 32))},
	}
	c, err := auth.NewConsole(context.Background(), cfg, ss, append([]auth.Option{auth.WithClock(clk.Now)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	handler = echoFor(c)
	e := &env{t: t, clk: clk, ss: ss, provider: p, console: c, srv: srv}
	e.client = e.newClient()
	return e
}

// echoFor serves c's routes and GET /whoami behind its middleware.
func echoFor(c *auth.Console) *echo.Echo {
	e := echo.New()
	e.Use(c.Middleware())
	c.Register(e)
	e.GET("/whoami", func(ec echo.Context) error {
		p := auth.FromContext(ec.Request().Context())
		if p == nil {
			return ec.NoContent(http.StatusUnauthorized)
		}
		w := whoami{Subject: p.Subject, Name: p.Name, Email: p.Email}
		for _, b := range p.Bindings {
			w.Roles = append(w.Roles, string(b.Role))
		}
		return ec.JSON(http.StatusOK, w)
	})
	return e
}

func (e *env) newClient() *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		e.t.Fatal(err)
	}
	c := *e.srv.Client() // a copy: the server's client is shared
	c.Jar = jar
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

func (e *env) get(c *http.Client, u string) *http.Response {
	e.t.Helper()
	if strings.HasPrefix(u, "/") {
		u = e.srv.URL + u
	}
	resp, err := c.Get(u)
	if err != nil {
		e.t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// follow requires a redirect and returns its target as sent.
func (e *env) follow(resp *http.Response, want int) string {
	e.t.Helper()
	if resp.StatusCode != want {
		e.t.Fatalf("%s: status %d, want %d", resp.Request.URL, resp.StatusCode, want)
	}
	return resp.Header.Get("Location")
}

// flow is one sign-in through the provider. tamperAuth may rewrite the
// authorization request, tamperBack the provider's redirect back. It
// returns the callback's response.
type flow struct {
	ret        string
	tamperAuth func(q url.Values)
	tamperBack func(q url.Values)
}

func (e *env) signIn(c *http.Client, subject string, f flow) *http.Response {
	e.t.Helper()
	e.provider.SignInAs(e.t, subject)
	authURL := e.follow(e.get(c, e.srv.URL+auth.LoginPath+"?return="+url.QueryEscape(f.ret)), http.StatusFound)
	back := e.follow(e.get(c, rewrite(e.t, authURL, f.tamperAuth)), http.StatusFound)
	return e.get(c, rewrite(e.t, back, f.tamperBack))
}

func rewrite(t *testing.T, raw string, fn func(url.Values)) string {
	t.Helper()
	if fn == nil {
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	fn(q)
	u.RawQuery = q.Encode()
	return u.String()
}

// who returns the signed-in principal as /whoami sees it, or nil.
func (e *env) who(c *http.Client) *whoami {
	e.t.Helper()
	resp, err := c.Get(e.srv.URL + "/whoami")
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized {
		return nil
	}
	var w whoami
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&w) != nil {
		e.t.Fatalf("whoami: status %d", resp.StatusCode)
	}
	return &w
}

// sessionCookie returns the session cookie the response set, or nil.
func sessionCookie(resp *http.Response) *http.Cookie {
	for _, c := range resp.Cookies() {
		if c.Name == auth.SessionCookie {
			return c
		}
	}
	return nil
}

// withCookie returns a fresh client (no jar) that sends only cookie.
func (e *env) withCookie(ck *http.Cookie) *http.Client {
	c := e.newClient()
	u, _ := url.Parse(e.srv.URL)
	c.Jar.SetCookies(u, []*http.Cookie{{Name: ck.Name, Value: ck.Value}})
	return c
}

func harnesses() map[string]ledgertest.Harness {
	return map[string]ledgertest.Harness{"SQLite": storetest.SQLite(), "Postgres": storetest.Postgres()}
}
