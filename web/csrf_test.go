package web_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"settle/auth"
	"settle/ledger/storetest"
	"settle/web"
)

// csrfConsole is a console with package auth's demo sign-in (real
// sessions in SQLite) on plain http, or with Secure cookies when secure.
func csrfConsole(t *testing.T, secure bool) *console {
	t.Helper()
	s := storetest.SQLite().New(t, time.Now).(store)
	var handler http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	log := leakCheckedLog(t)
	opts := []auth.Option{auth.WithListenAddr(srv.Listener.Addr().String()), auth.WithLogger(log)}
	if !secure {
		opts = append(opts, auth.WithInsecureCookie())
	}
	signIn, err := auth.NewDemoConsole(s, opts...)
	if err != nil {
		t.Fatal(err)
	}
	handler = web.New(web.Config{Store: s, SignIn: signIn, Logger: log,
		InsecureCookies: !signIn.Sessions().Secure(), Targets: consoleTargets{testTargets}, Contracts: testContracts(t)})
	return &console{t: t, base: srv.URL, store: s}
}

// pageToken is the CSRF token of the forms on path.
func (b *browser) pageToken(path string) string {
	b.c.t.Helper()
	r := b.get(path)
	m := csrfRe.FindSubmatch(r.body)
	if m == nil {
		b.c.t.Fatalf("no CSRF token on %s: %d %s", path, r.status, r.body)
	}
	return string(m[1])
}

func (b *browser) demoSignIn(user string) {
	b.c.t.Helper()
	r := b.do(http.MethodPost, "/login/demo", url.Values{"_csrf": {b.pageToken("/login")}, "user": {user}, "return": {"/operations"}})
	if r.status != http.StatusSeeOther {
		b.c.t.Fatalf("demo sign-in: %d %s", r.status, r.body)
	}
}

// The CSRF cookie's Secure flag follows the session cookie's.
func TestCSRF_CookieSecureFollowsSessions(t *testing.T) {
	t.Parallel()
	for _, secure := range []bool{true, false} {
		c := csrfConsole(t, secure)
		r := c.as("").get("/login")
		var ck *http.Cookie
		for _, k := range (&http.Response{Header: r.header}).Cookies() {
			if k.Name == "settle_csrf" {
				ck = k
			}
		}
		if ck == nil || ck.Secure != secure || !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode {
			t.Fatalf("secure=%v: CSRF cookie %+v", secure, ck)
		}
	}
}

// The token is bound to the session: it changes at sign-in and at
// sign-out, the token of before does not work after, and a token of
// another person's session does not work in this one.
func TestCSRF_BoundToSessionAndRotated(t *testing.T) {
	t.Parallel()
	c := csrfConsole(t, false)
	b := c.as("")
	before := b.pageToken("/login")
	b.demoSignIn("support")
	during := b.pageToken("/operations")
	if during == before {
		t.Fatal("the token did not change at sign-in")
	}
	other := c.as("")
	other.demoSignIn("support")
	for name, tok := range map[string]string{"BeforeSignIn": before, "AnotherSession": other.pageToken("/operations")} {
		if r := b.do(http.MethodPost, "/logout", url.Values{"_csrf": {tok}}); r.status != http.StatusForbidden {
			t.Fatalf("%s: sign-out with that token: %d", name, r.status)
		}
	}
	if r := b.do(http.MethodPost, "/logout", url.Values{"_csrf": {during}}); r.status != http.StatusSeeOther {
		t.Fatalf("sign-out: %d %s", r.status, r.body)
	}
	after := b.pageToken("/login")
	if after == during || after == before {
		t.Fatal("the token did not change at sign-out")
	}
	// A token of the signed-out state does not sign in with the old one.
	if r := b.do(http.MethodPost, "/login/demo", url.Values{"_csrf": {before}, "user": {"admin"}}); r.status != http.StatusForbidden {
		t.Fatalf("sign-in with a token from before: %d", r.status)
	}
}

// The token counts only in the form body, never in the URL; a write from
// another origin is refused by its Origin when the browser sends no
// Sec-Fetch-Site, even with a good token.
func TestCSRF_QueryAndOrigin(t *testing.T) {
	t.Parallel()
	c := csrfConsole(t, false)
	b := c.as("")
	tok := b.pageToken("/login")
	if r := b.do(http.MethodPost, "/login/demo?_csrf="+tok, url.Values{"user": {"admin"}}); r.status != http.StatusForbidden {
		t.Fatalf("token in the query string: %d", r.status)
	}
	form := url.Values{"_csrf": {tok}, "user": {"admin"}}
	for _, origin := range []string{"https://evil.example", "null"} {
		if r := b.do(http.MethodPost, "/login/demo", form, "Origin", origin); r.status != http.StatusForbidden ||
			!strings.Contains(string(r.body), "another site") {
			t.Fatalf("Origin %s: %d", origin, r.status)
		}
	}
	if r := b.do(http.MethodPost, "/login/demo", form, "Origin", c.base); r.status != http.StatusSeeOther {
		t.Fatalf("same Origin: %d %s", r.status, r.body)
	}
}

// The header shows the stable subject beside the name: the subject the
// event log and `settle session revoke` use.
func TestConsole_HeaderShowsSubject(t *testing.T) {
	t.Parallel()
	c := csrfConsole(t, false)
	b := c.as("")
	b.demoSignIn("support")
	if page := string(b.get("/operations").body); !strings.Contains(page, `data-testid="user-identity">sam@demo.invalid · demo:support<`) {
		t.Fatalf("no subject in the header:\n%s", page)
	}
}
