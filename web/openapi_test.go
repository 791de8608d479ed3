package web_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"testing"

	"settle/web"
)

// Every API route is in the OpenAPI document, and every documented
// operation is a route.
func TestOpenAPI_MatchesRoutes(t *testing.T) {
	t.Parallel()
	e := web.New(web.Config{Targets: testTargets})
	param := regexp.MustCompile(`:([a-z_]+)`)
	routes := map[string]bool{}
	for _, r := range e.Routes() {
		if !strings.HasPrefix(r.Path, "/api/v1/") || r.Method == "echo_route_not_found" {
			continue
		}
		path := param.ReplaceAllString(strings.TrimPrefix(r.Path, "/api/v1"), "{$1}")
		routes[strings.ToLower(r.Method)+" "+path] = true
	}

	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/openapi.json", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("openapi.json: %d", rec.Code)
	}
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("openapi version %q", doc.OpenAPI)
	}
	documented := map[string]bool{}
	for path, ops := range doc.Paths {
		for method := range ops {
			documented[method+" "+path] = true
		}
	}
	if missing, extra := diff(routes, documented), diff(documented, routes); len(missing)+len(extra) > 0 {
		t.Fatalf("routes missing from the document: %v; documented but not routed: %v", missing, extra)
	}
	if len(routes) < 4 {
		t.Fatalf("only %d API routes found", len(routes))
	}
}

func diff(a, b map[string]bool) []string {
	var out []string
	for k := range a {
		if !b[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
