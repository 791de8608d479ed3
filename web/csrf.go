package web

import (
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

// CSRFField is the form field every state-changing console form carries
// its CSRF token in; CSRFContextKey is where the token waits in the echo
// context for the page that renders the form.
const (
	CSRFField      = "_csrf"
	CSRFContextKey = "csrf"
	csrfCookie     = "settle_csrf"
)

// csrf protects every state-changing console request, sign-in and
// sign-out included, with a token bound to a SameSite=Lax cookie. The API
// (bearer tokens) and the webhooks (signatures) carry no ambient
// credentials and are exempt.
//
// Echo's middleware trusts a browser's Sec-Fetch-Site: same-origin in place
// of the token. settle asks for both: a cross-site or same-site write is
// refused on that header, and every write must then present the token, so
// that a forged same-origin request (an injected form, a confused proxy)
// still fails.
func csrf(insecureCookies bool) echo.MiddlewareFunc {
	mw := middleware.CSRFWithConfig(middleware.CSRFConfig{
		// Static files are public and cached for a year: no cookie on them.
		Skipper: func(c echo.Context) bool {
			p := c.Request().URL.Path
			return !isConsolePath(p) || strings.HasPrefix(p, "/static/")
		},
		TokenLookup:    "form:" + CSRFField,
		ContextKey:     CSRFContextKey,
		CookieName:     csrfCookie,
		CookiePath:     "/",
		CookieHTTPOnly: true,
		CookieSecure:   !insecureCookies,
		CookieSameSite: http.SameSiteLaxMode,
		ErrorHandler: func(error, echo.Context) error {
			return &pageError{status: http.StatusForbidden,
				message: "This form has expired or did not come from settle. Go back, reload the page and try again."}
		},
	})
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		guarded := mw(next)
		return func(c echo.Context) error {
			h := c.Request().Header
			site := h.Get(echo.HeaderSecFetchSite)
			if !safeMethod(c.Request().Method) && isConsolePath(c.Request().URL.Path) &&
				(site == "cross-site" || site == "same-site") {
				return &pageError{status: http.StatusForbidden,
					message: "A request from another site cannot change anything in settle."}
			}
			h.Del(echo.HeaderSecFetchSite)
			return guarded(c)
		}
	}
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
