package auth_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"settle/auth"
	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/storetest"
)

// The demo sign-in is refused unless bound to loopback.
func TestDemo_LoopbackOnly(t *testing.T) {
	t.Parallel()
	ss := storetest.SQLite().New(t, nil).(ledger.SessionStore)
	for _, addr := range []string{"", ":8080", "0.0.0.0:8080", "[::]:8080", "192.168.1.5:8080", "example.com:80"} {
		if _, err := auth.NewDemoConsole(ss, auth.WithListenAddr(addr)); err == nil {
			t.Errorf("demo console on %q was allowed", addr)
		}
	}
	for _, addr := range []string{"127.0.0.1:8080", "[::1]:8080", "localhost:8080"} {
		if _, err := auth.NewDemoConsole(ss, auth.WithListenAddr(addr), auth.WithInsecureCookie()); err != nil {
			t.Errorf("demo console on %q: %v", addr, err)
		}
	}
}

// The demo users cover every role; the two owners own the demo target as
// two people; one support user sees only acme.
func TestDemo_Users(t *testing.T) {
	t.Parallel()
	roles := map[auth.Role]int{}
	for _, u := range auth.DemoUsers() {
		bs := auth.BindingsFor(auth.DemoBindings(), u.Claims)
		if len(bs) == 0 {
			t.Errorf("demo user %s has no role", u.ID)
		}
		for _, b := range bs {
			roles[b.Role]++
		}
	}
	if roles[auth.Support] != 2 || roles[auth.Owner] != 2 || roles[auth.Manager] != 1 || roles[auth.Admin] != 1 {
		t.Fatalf("roles = %v", roles)
	}
	acme := &auth.Principal{Bindings: auth.BindingsFor(auth.DemoBindings(), []string{"demo-support-acme"})}
	if !acme.Can(auth.ViewOperations, auth.DemoTenantA, "") || acme.Can(auth.ViewOperations, auth.DemoTenantB, "") {
		t.Fatal("support-acme must see acme and not globex")
	}
	owner := &auth.Principal{Bindings: auth.BindingsFor(auth.DemoBindings(), []string{"demo-owners"})}
	if !owner.Can(auth.Resolve, auth.DemoTenantB, auth.DemoTarget) || owner.Can(auth.Resolve, auth.DemoTenantB, "payments") {
		t.Fatal("owners resolve the demo target only")
	}
}

// Choosing a user on the page signs them in with the same sessions as
// OIDC; the page carries the CSRF token; an unknown user is refused.
func TestDemo_SignIn(t *testing.T) {
	t.Parallel()
	clk := ledgertest.NewClock()
	ss := storetest.SQLite().New(t, clk.Now).(ledger.SessionStore)
	c, err := auth.NewDemoConsole(ss, auth.WithListenAddr("127.0.0.1:8080"), auth.WithClock(clk.Now))
	if err != nil {
		t.Fatal(err)
	}
	e := echoFor(c)
	e.Pre(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(ec echo.Context) error { ec.Set("csrf", "csrf-token-value"); return next(ec) }
	})
	srv := httptest.NewTLSServer(e)
	t.Cleanup(srv.Close)
	en := &env{t: t, clk: clk, ss: ss, console: c, srv: srv}
	client := en.newClient()

	resp, err := client.Get(srv.URL + auth.LoginPath + "?return=/operations")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	page := string(body)
	for _, u := range auth.DemoUsers() {
		if !strings.Contains(page, `value="`+u.ID+`"`) {
			t.Errorf("the chooser lacks %s", u.ID)
		}
	}
	if !strings.Contains(page, `name="_csrf" value="csrf-token-value"`) || !strings.Contains(page, `value="/operations"`) {
		t.Fatalf("page = %s", page)
	}

	post := func(user, ret string) *http.Response {
		r, err := client.PostForm(srv.URL+auth.DemoLoginPath, url.Values{"user": {user}, "return": {ret}})
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		return r
	}
	if r := post("mallory", "/"); r.StatusCode != http.StatusBadRequest || sessionCookie(r) != nil {
		t.Fatalf("unknown user: %d", r.StatusCode)
	}
	r := post("owner-ada", "https://evil.example/")
	if got := en.follow(r, http.StatusSeeOther); got != "/" {
		t.Fatalf("redirect = %q", got)
	}
	ck := sessionCookie(r)
	if ck == nil || !ck.Secure || !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode {
		t.Fatalf("cookie = %+v", ck)
	}
	w := en.who(client)
	if w == nil || w.Subject != "demo:owner-ada" || w.Name != "Ada Owner" || len(w.Roles) != 1 || w.Roles[0] != "owner" {
		t.Fatalf("whoami = %+v", w)
	}
	post("owner-grace", "/")
	if w := en.who(client); w == nil || w.Subject != "demo:owner-grace" {
		t.Fatalf("whoami = %+v", w)
	}
	if w := en.who(en.withCookie(ck)); w != nil {
		t.Fatalf("Ada's session outlived Grace's sign-in in the same browser: %+v", w)
	}
}

// A non-Secure cookie is refused off loopback, and honoured on it.
func TestInsecureCookie_LoopbackOnly(t *testing.T) {
	t.Parallel()
	if err := auth.CheckLoopback("0.0.0.0:8080"); err == nil {
		t.Fatal("0.0.0.0 is not loopback")
	}
	ss := storetest.SQLite().New(t, nil).(ledger.SessionStore)
	if _, err := auth.NewDemoConsole(ss, auth.WithListenAddr("127.0.0.1:1"), auth.WithInsecureCookie()); err != nil {
		t.Fatal(err)
	}
	store, err := auth.NewDBStore(ss, make([]byte, 32), auth.DefaultAbsolute, auth.DefaultIdle, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	sess := store.Fresh(auth.SessionCookie)
	sess.Values[auth.ValueSubject] = "demo:admin"
	rec := httptest.NewRecorder()
	if err := store.Save(httptest.NewRequest(http.MethodPost, "/", nil), rec, sess); err != nil {
		t.Fatal(err)
	}
	if ck := rec.Result().Cookies(); len(ck) != 1 || ck[0].Secure || !ck[0].HttpOnly {
		t.Fatalf("cookie = %+v", ck)
	}
	// Saving a session without a subject is refused: identity is written at sign-in.
	if err := store.Save(httptest.NewRequest(http.MethodPost, "/", nil), httptest.NewRecorder(), store.Fresh(auth.SessionCookie)); err == nil {
		t.Fatal("saved an anonymous session")
	}
}
