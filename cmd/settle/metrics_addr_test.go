package main

import (
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// --metrics-addr moves /metrics to a listener of its own: the main
// address answers 404 for it, the metrics address serves the registry, and
// the start-up line says where.
func TestServe_MetricsAddr(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, dir, nil, "--database-url", "sqlite:"+filepath.Join(dir, "settle.db"),
		"--metrics-addr", "127.0.0.1:0")
	m := regexp.MustCompile(`metrics: (http://\S+/metrics);`).FindStringSubmatch(s.Line)
	if m == nil {
		t.Fatalf("start-up line %q names no metrics address", s.Line)
	}
	resp, err := http.Get(s.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("main address /metrics: %d, want 404", resp.StatusCode)
	}
	if page := scrape(t, strings.TrimSuffix(m[1], "/metrics")); !strings.Contains(page, "go_goroutines") {
		t.Fatalf("metrics address: %.200s", page)
	}
	healthy(t, s.URL)
}
