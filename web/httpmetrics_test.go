package web_test

import (
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"settle/ledger"
	"settle/metrics"
	"settle/web"
)

// Request durations are counted by route template, method and status
// class, never by URL (no operation id in any series) and never for
// /metrics; a refused payload conflict is counted once; with tenant
// labels off, no series names a tenant.
func TestMetrics_HTTPDurationsAndConflicts(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		reg := prometheus.NewRegistry()
		e := serve(t, counted(open(t), reg, metrics.Options{}), web.Config{Metrics: reg})
		first := e.post(charge)
		if first.status != http.StatusCreated {
			t.Fatalf("create: %d %s", first.status, first.body)
		}
		id := first.json(t)["operation_id"].(string)
		if r := e.post(charge); r.status != http.StatusOK {
			t.Fatalf("same create: %d", r.status)
		}
		wantError(t, e.post(strings.Replace(charge, "5000", "4000", 1)), http.StatusConflict, "payload_conflict")
		if r := e.do(http.MethodGet, "/api/v1/operations/"+id, "", nil); r.status != http.StatusOK {
			t.Fatalf("get: %d", r.status)
		}
		e.do(http.MethodGet, "/nothing-here/"+id, "", nil) // no route: never its URL
		e.do(http.MethodGet, "/metrics", "", nil)
		page := string(e.do(http.MethodGet, "/metrics", "", nil).body)

		for _, want := range []string{
			`settle_payload_conflicts_total 1`,
			`settle_http_request_duration_seconds_count{code="2xx",method="POST",route="/api/v1/operations"} 2`,
			`settle_http_request_duration_seconds_count{code="4xx",method="POST",route="/api/v1/operations"} 1`,
			`settle_http_request_duration_seconds_count{code="2xx",method="GET",route="/api/v1/operations/:id"} 1`,
		} {
			if !strings.Contains(page, want+"\n") {
				t.Errorf("/metrics lacks %q:\n%s", want, settleLines(page))
			}
		}
		if strings.Contains(page, id) || strings.Contains(page, `route="/metrics"`) {
			t.Errorf("a series names an operation id or /metrics:\n%s", settleLines(page))
		}
		if strings.Contains(page, `tenant="`) {
			t.Errorf("tenant labels off, yet a series has one:\n%s", settleLines(page))
		}
	})
}

// With tenant labels on, the payload conflicts are counted by tenant.
func TestMetrics_ConflictsByTenant(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		reg := prometheus.NewRegistry()
		e := serve(t, counted(open(t), reg, metrics.Options{TenantLabels: true}), web.Config{Metrics: reg})
		e.post(charge)
		wantError(t, e.post(strings.Replace(charge, "5000", "4000", 1)), http.StatusConflict, "payload_conflict")
		if page := string(e.do(http.MethodGet, "/metrics", "", nil).body); !strings.Contains(page, `settle_payload_conflicts_total{tenant="acme"} 1`+"\n") {
			t.Errorf("no conflict counted for acme:\n%s", settleLines(page))
		}
	})
}

// counted makes s count what it commits, on metrics registered on reg,
// as settle serve does.
func counted(s store, reg prometheus.Registerer, o metrics.Options) store {
	s.(ledger.Observable).SetObserver(metrics.Observer{Metrics: metrics.New(reg, o), Events: s,
		Log: slog.New(slog.DiscardHandler)})
	return s
}

// settleLines is settle's own series of a /metrics page, for a failure
// message.
func settleLines(page string) string {
	var out []string
	for _, l := range strings.Split(page, "\n") {
		if strings.HasPrefix(l, "settle_") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
