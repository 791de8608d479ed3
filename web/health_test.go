package web_test

import (
	"net/http"
	"testing"

	"settle/web"
)

func TestHealthAndReadiness(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		s := open(t)
		e := serve(t, s, web.Config{})
		for path, want := range map[string]int{"/healthz": 200, "/readyz": 200, "/metrics": 200} {
			if r := e.do(http.MethodGet, path, "", nil); r.status != want {
				t.Fatalf("%s: %d", path, r.status)
			}
		}
		s.Close() // the database goes away
		if r := e.do(http.MethodGet, "/readyz", "", nil); r.status != http.StatusServiceUnavailable {
			t.Fatalf("/readyz with the store closed: %d", r.status)
		}
		if r := e.do(http.MethodGet, "/healthz", "", nil); r.status != http.StatusOK {
			t.Fatalf("/healthz must only say the process is up: %d", r.status)
		}
	})
}
