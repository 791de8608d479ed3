package web

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"
)

// CSRFField is the form field every state-changing console form carries
// its CSRF token in; CSRFContextKey is where the token waits in the echo
// context for the page that renders the form.
const (
	CSRFField      = "_csrf"
	CSRFContextKey = "csrf"
	csrfCookie     = "settle_csrf"
)

// sessionBinder is a SignIn whose sessions the CSRF token is bound to
// (package auth's console): SessionBinding returns a value that names the
// request's live session and no other, or "" for a request without one.
type sessionBinder interface {
	SessionBinding(r *http.Request) (string, error)
}

// csrfRotated are the requests that sign someone in or out: each gets a
// fresh CSRF cookie, so that no token from before crosses a sign-in or a
// sign-out.
var csrfRotated = map[string]string{
	"/login/demo":    http.MethodPost,
	"/logout":        http.MethodPost,
	"/auth/callback": http.MethodGet,
}

// csrf protects every state-changing console request, sign-in and
// sign-out included. The API (bearer tokens) and the webhooks
// (signatures) carry no ambient credentials and are exempt.
//
// A write is refused when the browser says it comes from another site
// (Sec-Fetch-Site), or, when the browser sends no Sec-Fetch-Site, when its
// Origin is not this host; and every write must then present the token in
// its form body (never in the URL, which ends up in logs and Referer
// headers). The token is derived from a random secret in an HttpOnly,
// SameSite=Lax cookie and, for a signed-in request, from the session:
// a secret someone planted in the browser, or a token of another session,
// is worth nothing. The secret is replaced at every sign-in and sign-out.
func csrf(insecureCookies bool, signIn SignIn) echo.MiddlewareFunc {
	binder, _ := signIn.(sessionBinder)
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			// Static files are public and cached for a year: no cookie on them.
			if !isConsolePath(r.URL.Path) || strings.HasPrefix(r.URL.Path, "/static/") {
				return next(c)
			}
			write := !safeMethod(r.Method)
			if write {
				if msg := crossSite(r); msg != "" {
					return &pageError{status: http.StatusForbidden, message: msg}
				}
			}
			secret := ""
			if ck, err := r.Cookie(csrfCookie); err == nil && validSecret(ck.Value) {
				secret = ck.Value
			}
			binding := ""
			if binder != nil {
				b, err := binder.SessionBinding(r)
				if err != nil {
					return err
				}
				binding = b
			}
			if write {
				got := r.PostFormValue(CSRFField)
				if secret == "" || got == "" || !hmac.Equal([]byte(got), []byte(csrfTokenFor(secret, binding))) {
					return &pageError{status: http.StatusForbidden,
						message: "This form has expired or did not come from settle. Go back, reload the page and try again."}
				}
			}
			if secret == "" || csrfRotated[r.URL.Path] == r.Method {
				secret = randomSecret()
				binding = "" // the page this request renders is shown before the new session exists
				c.SetCookie(&http.Cookie{Name: csrfCookie, Value: secret, Path: "/", MaxAge: 86400,
					Secure: !insecureCookies, HttpOnly: true, SameSite: http.SameSiteLaxMode})
			}
			c.Set(CSRFContextKey, csrfTokenFor(secret, binding))
			return next(c)
		}
	}
}

// crossSite returns why a write comes from another site, or "".
func crossSite(r *http.Request) string {
	const msg = "A request from another site cannot change anything in settle."
	switch r.Header.Get(echo.HeaderSecFetchSite) {
	case "cross-site", "same-site":
		return msg
	case "same-origin", "none":
		return ""
	}
	// An older browser, or a client that sends no fetch metadata: its
	// Origin, when it sends one, must be this host.
	origin := r.Header.Get(echo.HeaderOrigin)
	if origin == "" {
		return ""
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || !strings.EqualFold(u.Host, r.Host) {
		return msg
	}
	return ""
}

// csrfTokenFor is the token of a form for the cookie's secret and the
// session binding: the secret itself without a session (the sign-in
// forms), else an HMAC of the session under the secret.
func csrfTokenFor(secret, binding string) string {
	if binding == "" {
		return secret
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("settle csrf token of session " + binding))
	return hex.EncodeToString(m.Sum(nil))
}

func validSecret(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

func randomSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}

// csrfToken is the token forms on this page must carry.
func csrfToken(c echo.Context) string {
	t, _ := c.Get(CSRFContextKey).(string)
	return t
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// readOnly refuses every console write except signing in and out when the
// server runs with the read-only switch: the refusal happens here, on the
// server, whatever a page shows.
func readOnly(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		p := c.Request().URL.Path
		if safeMethod(c.Request().Method) || !isConsolePath(p) || slices.Contains(signInPaths, p) {
			return next(c)
		}
		return &pageError{status: http.StatusServiceUnavailable,
			message: "settle is in read-only mode: changes are switched off on this server. Nothing was changed."}
	}
}
