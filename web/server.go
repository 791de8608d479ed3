// Package web is settle's HTTP surface: health, the client API, the console
// and the webhook receiver, on one Echo server.
package web

import (
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"settle/ledger"
)

// Config holds what the server needs; cmd/settle fills it.
type Config struct {
	Store  ledger.Store
	Logger *slog.Logger
}

// New returns the configured Echo server.
func New(cfg Config) *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Use(middleware.Recover())
	e.Use(middleware.RequestID())
	e.Use(requestLog(cfg.Logger))
	e.GET("/healthz", func(c echo.Context) error {
		return c.String(http.StatusOK, "ok\n")
	})
	return e
}

// requestLog writes one line per request: method, route pattern (never the
// raw path, which can carry identifiers), status and duration. Bodies and
// headers are never logged.
func requestLog(log *slog.Logger) echo.MiddlewareFunc {
	return middleware.RequestLoggerWithConfig(middleware.RequestLoggerConfig{
		LogStatus: true, LogMethod: true, LogRoutePath: true, LogLatency: true, LogRequestID: true,
		LogValuesFunc: func(c echo.Context, v middleware.RequestLoggerValues) error {
			log.Info("request", "method", v.Method, "route", v.RoutePath, "status", v.Status,
				"duration_ms", v.Latency.Milliseconds(), "request_id", v.RequestID)
			return nil
		},
	})
}
