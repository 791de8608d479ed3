package web

import (
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
)

// httpDurations observes every request's duration by route template
// (Echo's c.Path(), never the URL with its ids: bounded cardinality),
// method and status class ("2xx"…). /metrics itself is left out: a scrape
// timing itself says nothing about settle.
func httpDurations(reg prometheus.Registerer) echo.MiddlewareFunc {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "settle_http_request_duration_seconds",
		Help:    "HTTP request durations by route template, method and status class.",
		Buckets: prometheus.DefBuckets,
	}, []string{"route", "method", "code"})
	reg.MustRegister(h)
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			err := next(c)
			route := c.Path()
			if route == "/metrics" {
				return err
			}
			if route == "" {
				route = "unmatched"
			}
			if err != nil {
				// Answer now (requestLog inside already has, normally),
				// so that the status observed is the one written.
				c.Error(err)
				err = nil
			}
			status := c.Response().Status
			h.WithLabelValues(route, c.Request().Method, strconv.Itoa(status/100)+"xx").Observe(time.Since(start).Seconds())
			return err
		}
	}
}
