package web

import (
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// headers sets the response headers every answer needs before anything
// else runs, so that errors, 404s and 405s carry them too:
// X-Content-Type-Options: nosniff everywhere (a browser must never guess a
// JSON error or a metrics page into HTML), and Cache-Control: no-store on
// the API and the webhook receiver, whose answers hold one tenant's data or
// say something about it and must not be kept by a proxy or a browser. The
// console's pages (and its sign-in) get the CSP, the referrer policy and a
// refusal to be framed.
func headers(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set(echo.HeaderXContentTypeOptions, "nosniff")
		if p := c.Request().URL.Path; strings.HasPrefix(p, "/api/") || strings.HasPrefix(p, "/webhooks/") {
			h.Set(echo.HeaderCacheControl, "no-store")
		} else if isConsolePath(p) {
			h.Set(echo.HeaderContentSecurityPolicy, consoleCSP)
			h.Set(echo.HeaderReferrerPolicy, "same-origin")
			h.Set(echo.HeaderXFrameOptions, "DENY")
		}
		return next(c)
	}
}

// consoleCSP allows the console's own files and nothing else: no inline
// script or style, no framing, forms posting only back to settle, and
// requests from script (the live pages' polling) only to settle.
const consoleCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// Metrics serves reg at /metrics, and /healthz, and nothing else, for a
// listener of its own (settle serve --metrics-addr): operational metrics
// then stay off the public listener, and a probe there answers however
// the public one is flooded.
func Metrics(reg *prometheus.Registry) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(echo.HeaderContentType, echo.MIMETextPlainCharsetUTF8)
		_, _ = io.WriteString(w, "ok\n")
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(echo.HeaderXContentTypeOptions, "nosniff")
		mux.ServeHTTP(w, r)
	})
}
