package web_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"settle/target"
	"settle/web"
)

// Every response carries X-Content-Type-Options: nosniff, and every API
// and webhook answer (tenant data and errors alike) Cache-Control:
// no-store, whichever layer produced it: a handler, the error handler, the
// authenticator or the router's 404 and 405.
func TestHeaders_NosniffAndNoStore(t *testing.T) {
	t.Parallel()
	set, err := target.Parse("hooks.yaml", []byte(hookContract))
	if err != nil {
		t.Fatal(err)
	}
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		s := open(t)
		e := serve(t, s, web.Config{Contracts: set, WebhookSecrets: map[string][]byte{"payments": hookSecret}})
		created := e.post(charge)
		if created.status != http.StatusCreated {
			t.Fatalf("POST: %d %s", created.status, created.body)
		}
		id := created.json(t)["operation_id"].(string)

		for _, c := range []struct {
			name         string
			method, path string
			body, auth   string
			status       int
			noStore      bool
		}{
			{"Create200", "POST", "/api/v1/operations", charge, "", 200, true},
			{"Get200", "GET", "/api/v1/operations/" + id, "", "", 200, true},
			{"List200", "GET", "/api/v1/operations", "", "", 200, true},
			{"Get404", "GET", "/api/v1/operations/00000000-0000-4000-8000-000000000000", "", "", 404, true},
			{"List422", "GET", "/api/v1/operations?limit=0", "", "", 422, true},
			{"Create400", "POST", "/api/v1/operations", "{", "", 400, true},
			{"Get401", "GET", "/api/v1/operations/" + id, "", "Bearer nonsense", 401, true},
			{"RouteNotFound", "GET", "/api/v1/nothing", "", "", 404, true},
			{"MethodNotAllowed", "DELETE", "/api/v1/operations/" + id, "", "", 405, true},
			{"OpenAPI", "GET", "/api/v1/openapi.json", "", "", 200, true},
			{"Webhook401", "POST", "/webhooks/payments", `{}`, "", 401, true},
			{"Webhook404", "POST", "/webhooks/nowhere", `{}`, "", 404, true},
			{"Healthz", "GET", "/healthz", "", "", 200, false},
			{"Readyz", "GET", "/readyz", "", "", 200, false},
			{"Metrics", "GET", "/metrics", "", "", 200, false},
			{"NotFound", "GET", "/nothing", "", "", 404, false},
		} {
			t.Run(c.name, func(t *testing.T) {
				req, _ := http.NewRequest(c.method, e.base+c.path, strings.NewReader(c.body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+e.token)
				if c.auth != "" {
					req.Header.Set("Authorization", c.auth)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != c.status {
					t.Fatalf("status %d, want %d", resp.StatusCode, c.status)
				}
				if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
					t.Errorf("X-Content-Type-Options %q, want nosniff", got)
				}
				if got := resp.Header.Get("Cache-Control"); c.noStore && got != "no-store" {
					t.Errorf("Cache-Control %q, want no-store", got)
				}
			})
		}
	})
}

// With MetricsElsewhere the main handler has no /metrics; web.Metrics
// serves the registry on its own listener, with the same nosniff header.
func TestHeaders_MetricsElsewhere(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	main := httptest.NewServer(web.New(web.Config{Targets: testTargets, Metrics: reg, MetricsElsewhere: true}))
	t.Cleanup(main.Close)
	metrics := httptest.NewServer(web.Metrics(reg))
	t.Cleanup(metrics.Close)

	get := func(url string) *http.Response {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	if r := get(main.URL + "/metrics"); r.StatusCode != http.StatusNotFound {
		t.Fatalf("main listener /metrics: %d, want 404", r.StatusCode)
	}
	if r := get(main.URL + "/healthz"); r.StatusCode != http.StatusOK {
		t.Fatalf("main listener /healthz: %d", r.StatusCode)
	}
	r := get(metrics.URL + "/metrics")
	if r.StatusCode != http.StatusOK || r.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("metrics listener /metrics: %d %v", r.StatusCode, r.Header)
	}
	if r := get(metrics.URL + "/healthz"); r.StatusCode != http.StatusOK {
		t.Fatalf("metrics listener /healthz: %d", r.StatusCode)
	}
	if r := get(metrics.URL + "/api/v1/operations"); r.StatusCode != http.StatusNotFound {
		t.Fatalf("metrics listener serves more than /metrics and /healthz: %d", r.StatusCode)
	}
}
