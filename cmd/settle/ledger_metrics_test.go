package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// settle serve exports the ledger metrics: one operation sent and
// confirmed shows as its transitions, counted once by the store's
// observer, an HTTP create by route, a refused payload conflict once, and
// the database gauges at 0 for the configured target; without
// --metrics-tenant-labels no series names a tenant, with it they do.
func TestServe_LedgerMetrics(t *testing.T) {
	t.Parallel()
	for _, labels := range []bool{false, true} {
		name := "no tenant labels"
		if labels {
			name = "tenant labels"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			db := "sqlite:" + filepath.Join(dir, "settle.db")
			args := []string{"--database-url", db, "--demo-target", "--metrics-interval", "50ms"}
			if labels {
				args = append(args, "--metrics-tenant-labels")
			}
			base := start(t, dir, nil, args...)
			token := newToken(t, db)
			status, op := apiCall(t, http.MethodPost, base+"/api/v1/operations", token,
				`{"target":"demo","operation_type":"charge","intent_ref":"m-1","payload":{"amount":1200,"currency":"EUR"}}`)
			if status != http.StatusCreated {
				t.Fatalf("POST: %d", status)
			}
			waitState(t, base, token, op.ID, "SUCCEEDED", 10*time.Second)
			if status, _ := apiCall(t, http.MethodPost, base+"/api/v1/operations", token,
				`{"target":"demo","operation_type":"charge","intent_ref":"m-1","payload":{"amount":1300,"currency":"EUR"}}`); status != http.StatusConflict {
				t.Fatalf("conflicting POST: %d", status)
			}
			tenant, conflicts := "", `settle_payload_conflicts_total 1`
			if labels {
				tenant, conflicts = `tenant="acme",`, `settle_payload_conflicts_total{tenant="acme"} 1`
			}
			want := []string{
				`settle_transitions_total{from="PREPARED",` + tenant + `to="IN_FLIGHT"} 1`,
				`settle_transitions_total{from="IN_FLIGHT",` + tenant + `to="SUCCEEDED"} 1`,
				`settle_http_request_duration_seconds_count{code="2xx",method="POST",route="/api/v1/operations"} 1`,
				`settle_http_request_duration_seconds_count{code="4xx",method="POST",route="/api/v1/operations"} 1`,
				conflicts,
			}
			if !labels {
				want = append(want, `settle_operations{state="PREPARED",target="demo"} 0`,
					`settle_executor_queue_depth{target="demo"} 0`)
			}
			waitFor(t, 10*time.Second, "the ledger metrics", func() (bool, string) {
				m := scrape(t, base)
				for _, w := range want {
					if !strings.Contains(m, "\n"+w+"\n") {
						return false, "lacks " + w + ": " + metricLines(m, "settle_")
					}
				}
				return true, ""
			})
			if m := metricLines(scrape(t, base), "settle_"); strings.Contains(m, `tenant="`) != labels {
				t.Fatalf("tenant labels %v: %s", labels, m)
			}
		})
	}
}
