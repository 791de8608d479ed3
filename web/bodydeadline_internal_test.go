package web

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The body's pace counts from the handler's first read: a handler that
// first waits on settle's own work (a token lookup on a busy store) for
// longer than BodyTimeout still reads a body its client sent at once.
func TestPaceBodies_CountsFromTheFirstRead(t *testing.T) {
	t.Parallel()
	const perUnit = 100 * time.Millisecond
	srv := httptest.NewServer(paceBodies(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(3 * perUnit) // settle's work before the body
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		_, _ = w.Write(b)
	}), perUnit, 10*time.Second))
	t.Cleanup(srv.Close)
	body := strings.Repeat("x", 3*bodyUnit)
	res, err := http.Post(srv.URL, "text/plain", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	got, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || len(got) != len(body) {
		t.Fatalf("status %d, %d bytes back (%.60q); want 200 and the %d bytes sent", res.StatusCode, len(got), got, len(body))
	}
}
