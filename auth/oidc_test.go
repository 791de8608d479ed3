package auth_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"settle/auth"
	"settle/ledger/storetest"
)

// The whole code flow against a real provider, on both stores: the
// authorization request carries state, nonce and an S256 PKCE challenge;
// the token request carries the verifier; the person lands on the return
// path with a session whose cookie is Secure, HttpOnly, SameSite=Lax.
func TestSignIn_CodeFlow(t *testing.T) {
	for name, h := range harnesses() {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, h)
			var authQ url.Values
			resp := e.signIn(e.client, "ada-sub", flow{ret: "/operations?state=UNKNOWN", tamperAuth: func(q url.Values) {
				authQ = url.Values{}
				for k, v := range q {
					authQ[k] = v
				}
			}})
			if got := e.follow(resp, http.StatusSeeOther); got != "/operations?state=UNKNOWN" {
				t.Fatalf("redirect = %q", got)
			}
			for _, k := range []string{"state", "nonce", "code_challenge"} {
				if len(authQ.Get(k)) < 32 {
					t.Errorf("authorization request %s = %q, want a long random value", k, authQ.Get(k))
				}
			}
			if authQ.Get("code_challenge_method") != "S256" || authQ.Get("client_id") != e.provider.ClientID ||
				authQ.Get("redirect_uri") != e.srv.URL+auth.CallbackPath {
				t.Errorf("authorization request = %v", authQ)
			}
			// (x/oauth2 tries the client secret in a header, then in the
			// form: each try sends the verifier.)
			if v := e.provider.Verifiers(); len(v) == 0 || len(v[0]) < 43 || len(slices.Compact(slices.Clone(v))) != 1 {
				t.Errorf("token requests' code_verifier = %q, want one verifier", v)
			}

			ck := sessionCookie(resp)
			if ck == nil || !ck.Secure || !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.Path != "/" ||
				ck.MaxAge != int(auth.DefaultAbsolute/time.Second) {
				t.Fatalf("session cookie = %+v", ck)
			}
			if strings.Contains(ck.Value, "ada") || len(ck.Value) > 300 {
				t.Errorf("the cookie holds more than a signed id: %q", ck.Value)
			}
			w := e.who(e.client)
			if w == nil || w.Subject != "oidc:ada-sub" || w.Name != "Ada Lovelace" || w.Email != "ada@example.com" ||
				!slices.Equal(w.Roles, []string{"support"}) {
				t.Fatalf("whoami = %+v", w)
			}
		})
	}
}

// The flow cookie is HttpOnly, Secure, short-lived and scoped to the
// callback; the callback clears it, so a code cannot be used twice.
// (Each attempt has its own: see TestSignIn_TwoTabs.)
func TestSignIn_FlowCookie(t *testing.T) {
	e := newEnv(t, storetest.SQLite())
	resp := e.get(e.client, e.srv.URL+auth.LoginPath)
	var flowCk *http.Cookie
	for _, c := range resp.Cookies() {
		if strings.HasPrefix(c.Name, "settle_signin_") {
			flowCk = c
		}
	}
	if flowCk == nil || !flowCk.Secure || !flowCk.HttpOnly || flowCk.Path != auth.CallbackPath || flowCk.MaxAge != 600 {
		t.Fatalf("flow cookie = %+v", flowCk)
	}
	e.provider.SignInAs(t, "ada-sub")
	back := e.follow(e.get(e.client, e.follow(resp, http.StatusFound)), http.StatusFound)
	e.follow(e.get(e.client, back), http.StatusSeeOther)
	// The same callback again: the flow cookie is gone.
	if again := e.get(e.client, back); again.StatusCode != http.StatusBadRequest {
		t.Fatalf("replayed callback: status %d, want 400", again.StatusCode)
	}
}

// A callback whose state is not the browser's, whose nonce is not the
// browser's, whose PKCE challenge was swapped, or that comes without the
// flow cookie, signs nobody in.
func TestSignIn_Refused(t *testing.T) {
	for name, f := range map[string]flow{
		"StateMismatch":  {tamperBack: func(q url.Values) { q.Set("state", strings.Repeat("0", 64)) }},
		"StateMissing":   {tamperBack: func(q url.Values) { q.Del("state") }},
		"NonceMismatch":  {tamperAuth: func(q url.Values) { q.Set("nonce", strings.Repeat("1", 64)) }},
		"PKCEChallenge":  {tamperAuth: func(q url.Values) { q.Set("code_challenge", strings.Repeat("A", 43)) }},
		"ProviderError":  {tamperBack: func(q url.Values) { q.Del("code"); q.Set("error", "access_denied") }},
		"CodeNotIssued":  {tamperBack: func(q url.Values) { q.Set("code", "forged-code") }},
		"NoPKCEAtSignIn": {tamperAuth: func(q url.Values) { q.Del("code_challenge"); q.Del("code_challenge_method") }},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, storetest.SQLite())
			resp := e.signIn(e.client, "ada-sub", f)
			if name == "NoPKCEAtSignIn" {
				// The provider did not ask for PKCE; the verifier we send
				// is then ignored: the flow still works, and still sent it.
				e.follow(resp, http.StatusSeeOther)
				if v := e.provider.Verifiers(); len(v) == 0 || v[0] == "" {
					t.Fatalf("verifiers = %q", v)
				}
				return
			}
			if resp.StatusCode != http.StatusBadRequest || sessionCookie(resp) != nil {
				t.Fatalf("status %d, session cookie %v; want 400 and none", resp.StatusCode, sessionCookie(resp))
			}
			if w := e.who(e.client); w != nil {
				t.Fatalf("signed in as %+v", w)
			}
		})
	}
	t.Run("NoFlowCookie", func(t *testing.T) {
		e := newEnv(t, storetest.SQLite())
		e.provider.SignInAs(t, "ada-sub")
		authURL := e.follow(e.get(e.client, e.srv.URL+auth.LoginPath), http.StatusFound)
		back := e.follow(e.get(e.client, authURL), http.StatusFound)
		// Another browser (an attacker's link) brings the callback.
		other := e.newClient()
		if resp := e.get(other, back); resp.StatusCode != http.StatusBadRequest || sessionCookie(resp) != nil {
			t.Fatalf("status %d", resp.StatusCode)
		}
	})
}

// Someone the provider signs in but whose groups map to no role gets a 403
// page and no session.
func TestSignIn_NoRole(t *testing.T) {
	e := newEnv(t, storetest.SQLite())
	resp, err := e.client.Get(e.srv.URL + auth.LoginPath)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	e.provider.SignInAs(t, "eve-sub")
	back := e.follow(e.get(e.client, e.follow(resp, http.StatusFound)), http.StatusFound)
	final, err := e.client.Get(back)
	if err != nil {
		t.Fatal(err)
	}
	defer final.Body.Close()
	var body strings.Builder
	_, _ = io.Copy(&body, final.Body)
	if final.StatusCode != http.StatusForbidden || sessionCookie(final) != nil ||
		!strings.Contains(body.String(), "no role") {
		t.Fatalf("status %d, cookie %v, body %q", final.StatusCode, sessionCookie(final), body.String())
	}
	if w := e.who(e.client); w != nil {
		t.Fatalf("signed in as %+v", w)
	}
}

// Return paths: same-origin absolute paths only.
func TestSafeReturn(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                          "/",
		"/":                         "/",
		"/operations/abc?tab=story": "/operations/abc?tab=story",
		"/a#frag":                   "/a#frag",
		"//evil.example/x":          "/",
		"/\\evil.example":           "/",
		"/\\/evil.example":          "/",
		"\\\\evil.example":          "/",
		"https://evil.example/":     "/",
		"http:/evil.example":        "/",
		"javascript:alert(1)":       "/",
		"evil.example":              "/",
		"/ok\r\nSet-Cookie: x=1":    "/",
		"/\t/evil.example":          "/",
		"/%2F/evil.example":         "/", // harmless in a browser, but a decoding proxy may see //
		"/login?return=/x":          "/",
		"/auth/callback?code=1":     "/",
	} {
		if got := auth.SafeReturn(in); got != want {
			t.Errorf("SafeReturn(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLoginURL(t *testing.T) {
	t.Parallel()
	if got := auth.LoginURL("/operations?q=a b&state=UNKNOWN"); got != "/login?return=%2Foperations%3Fq%3Da+b%26state%3DUNKNOWN" {
		t.Errorf("LoginURL = %q", got)
	}
	if got := auth.LoginURL("//evil.example"); got != "/login?return=%2F" {
		t.Errorf("LoginURL = %q", got)
	}
}

// An unsafe return path in the flow lands on "/".
func TestSignIn_UnsafeReturn(t *testing.T) {
	e := newEnv(t, storetest.SQLite())
	if got := e.follow(e.signIn(e.client, "ada-sub", flow{ret: "//evil.example/steal"}), http.StatusSeeOther); got != "/" {
		t.Fatalf("redirect = %q, want /", got)
	}
}

// Signing in gives a fresh session id: a cookie planted before sign-in is
// not adopted, and signing in again replaces (and ends) the old session.
func TestSignIn_FreshSession(t *testing.T) {
	e := newEnv(t, storetest.SQLite())
	u, _ := url.Parse(e.srv.URL)
	e.client.Jar.SetCookies(u, []*http.Cookie{{Name: auth.SessionCookie, Value: "planted-by-attacker"}})
	first := sessionCookie(e.signIn(e.client, "ada-sub", flow{}))
	if first == nil || first.Value == "planted-by-attacker" {
		t.Fatalf("first cookie = %+v", first)
	}
	second := sessionCookie(e.signIn(e.client, "grace-sub", flow{}))
	if second == nil || second.Value == first.Value {
		t.Fatalf("second sign-in kept the session id")
	}
	if w := e.who(e.withCookie(first)); w != nil {
		t.Fatalf("the replaced session still works: %+v", w)
	}
	if w := e.who(e.client); w == nil || w.Subject != "oidc:grace-sub" || !slices.Equal(w.Roles, []string{"owner"}) {
		t.Fatalf("whoami = %+v", w)
	}
}

// Sign-out deletes the row and clears the cookie: the old cookie, replayed,
// signs nobody in. Revoking a subject ends its sessions at once.
func TestSignOutAndRevoke(t *testing.T) {
	for name, h := range harnesses() {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, h)
			ck := sessionCookie(e.signIn(e.client, "ada-sub", flow{}))
			resp, err := e.client.PostForm(e.srv.URL+auth.LogoutPath, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if got := e.follow(resp, http.StatusSeeOther); got != auth.LoginPath+"?signed_out=1" {
				t.Fatalf("after sign-out: %q", got)
			}
			if cleared := sessionCookie(resp); cleared == nil || cleared.MaxAge >= 0 || cleared.Value != "" {
				t.Fatalf("cleared cookie = %+v", cleared)
			}
			if w := e.who(e.withCookie(ck)); w != nil {
				t.Fatalf("old cookie still signs in: %+v", w)
			}
			// After sign-out /login offers to sign in again rather than
			// going straight back to the provider.
			if r := e.get(e.client, e.srv.URL+auth.LoginPath+"?signed_out=1"); r.StatusCode != http.StatusOK {
				t.Fatalf("signed-out page: %d", r.StatusCode)
			}

			a := e.newClient()
			g := e.newClient()
			e.signIn(a, "ada-sub", flow{})
			e.signIn(g, "grace-sub", flow{})
			n, err := e.console.RevokeSubject(context.Background(), "oidc:ada-sub")
			if err != nil || n != 1 {
				t.Fatalf("revoke = %d, %v", n, err)
			}
			if w := e.who(a); w != nil {
				t.Fatalf("revoked session still works: %+v", w)
			}
			if w := e.who(g); w == nil {
				t.Fatal("another person's session ended")
			}
		})
	}
}

// Idle and absolute expiry, on the store's clock.
func TestSession_Expiry(t *testing.T) {
	t.Run("Idle", func(t *testing.T) {
		e := newEnv(t, storetest.SQLite())
		e.signIn(e.client, "ada-sub", flow{})
		e.clk.Advance(59 * time.Minute)
		if e.who(e.client) == nil {
			t.Fatal("ended before its idle hour")
		}
		e.clk.Advance(59 * time.Minute) // used 59 minutes ago: still alive
		if e.who(e.client) == nil {
			t.Fatal("a use did not extend the idle expiry")
		}
		e.clk.Advance(time.Hour)
		if w := e.who(e.client); w != nil {
			t.Fatalf("alive after an idle hour: %+v", w)
		}
	})
	t.Run("Absolute", func(t *testing.T) {
		e := newEnv(t, storetest.SQLite())
		e.signIn(e.client, "ada-sub", flow{})
		for range 14 { // 11h40m of steady use
			e.clk.Advance(50 * time.Minute)
			if e.who(e.client) == nil {
				t.Fatal("ended early")
			}
		}
		e.clk.Advance(20 * time.Minute)
		if w := e.who(e.client); w != nil {
			t.Fatalf("alive after 12 hours: %+v", w)
		}
	})
}

// A change of the binding rules applies to signed-in people at their next
// request.
func TestSession_BindingsResolvedPerRequest(t *testing.T) {
	e := newEnv(t, storetest.SQLite())
	e.signIn(e.client, "ada-sub", flow{})
	e.console.SetBindings(append(slices.Clone(testRules), auth.BindingRule{Group: "other", Role: auth.Manager}))
	if w := e.who(e.client); w == nil || !slices.Equal(w.Roles, []string{"support", "manager"}) {
		t.Fatalf("whoami = %+v", w)
	}
	e.console.SetBindings(nil)
	if w := e.who(e.client); w == nil || len(w.Roles) != 0 {
		t.Fatalf("whoami = %+v, want signed in with no role", w)
	}
}

// Two signed-out tabs of one browser start a sign-in each; finishing the
// older first does not spoil the newer: both complete. The callback keeps
// the browser's pending attempts few: the oldest beyond five go.
func TestSignIn_TwoTabs(t *testing.T) {
	e := newEnv(t, storetest.SQLite())
	start := func() string {
		e.provider.SignInAs(t, "ada-sub")
		return e.follow(e.get(e.client, e.srv.URL+auth.LoginPath), http.StatusFound)
	}
	older, newer := start(), start()
	backOlder := e.follow(e.get(e.client, older), http.StatusFound)
	backNewer := e.follow(e.get(e.client, newer), http.StatusFound)
	e.follow(e.get(e.client, backOlder), http.StatusSeeOther)
	e.follow(e.get(e.client, backNewer), http.StatusSeeOther)
	if w := e.who(e.client); w == nil || w.Subject != "oidc:ada-sub" {
		t.Fatalf("whoami = %+v", w)
	}

	var backs []string
	for range 8 {
		backs = append(backs, e.follow(e.get(e.client, start()), http.StatusFound))
	}
	e.follow(e.get(e.client, backs[len(backs)-1]), http.StatusSeeOther)
	cb, _ := url.Parse(e.srv.URL + auth.CallbackPath)
	pending := 0
	for _, c := range e.client.Jar.Cookies(cb) {
		if strings.HasPrefix(c.Name, "settle_signin_") {
			pending++
		}
	}
	if pending != 5 {
		t.Fatalf("%d pending sign-ins kept, want 5", pending)
	}
	// The newest of those still finishes; the oldest was dropped.
	e.follow(e.get(e.client, backs[len(backs)-2]), http.StatusSeeOther)
	if resp := e.get(e.client, backs[0]); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("the oldest attempt: status %d, want 400", resp.StatusCode)
	}
}
