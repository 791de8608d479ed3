package web_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"settle/web"
)

// serveRaw serves h behind web.NewHTTPServer on loopback.
func serveRaw(t *testing.T, h http.Handler, limits web.ServerLimits) (*web.HTTPServer, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := web.NewHTTPServer(h, limits)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	return srv, ln.Addr().String()
}

// readAll answers with the length of the body it read, or 400.
var readAll = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "cannot read the body", http.StatusBadRequest)
		return
	}
	fmt.Fprintf(w, "%d\n", len(b))
})

// trickleBody writes a request head for a body of n bytes, then one byte
// every pace until the server hangs up or the test ends.
func trickleBody(t *testing.T, c net.Conn, head string, n int, pace time.Duration) {
	t.Helper()
	if _, err := io.WriteString(c, head); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	go func() {
		for range n {
			select {
			case <-stop:
				return
			case <-time.After(pace):
			}
			if _, err := c.Write([]byte{'{'}); err != nil {
				return
			}
		}
	}()
}

// A body must keep a pace of 64 KiB per BodyTimeout: a trickled one is cut
// off at BodyTimeout, long before ReadTimeout, while a large body sent at
// a fair pace is read whole, though it takes longer than one BodyTimeout.
func TestHTTPServer_BodyPace(t *testing.T) {
	t.Parallel()
	limits := testLimits
	limits.ReadTimeout, limits.WriteTimeout, limits.BodyTimeout = 10*time.Second, 15*time.Second, 500*time.Millisecond
	_, addr := serveRaw(t, readAll, limits)
	dial := func() net.Conn {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}

	t.Run("Trickle", func(t *testing.T) {
		t.Parallel()
		c := dial()
		start := time.Now()
		trickleBody(t, c, "POST /x HTTP/1.1\r\nHost: settle\r\nContent-Length: 200\r\n\r\n", 200, 100*time.Millisecond)
		took, got := closedWithin(t, c, start, 2*time.Second)
		if took < 400*time.Millisecond || !strings.HasPrefix(got, "HTTP/1.1 400") {
			t.Fatalf("after %s: %q; want 400 and the connection closed at the 500ms body timeout", took, got)
		}
	})

	t.Run("FairPace", func(t *testing.T) {
		t.Parallel()
		c := dial()
		const n = 4 * 64 << 10
		start := time.Now()
		fmt.Fprintf(c, "POST /x HTTP/1.1\r\nHost: settle\r\nContent-Length: %d\r\n\r\n", n)
		chunk := strings.Repeat("a", 64<<10)
		for range 4 { // 64 KiB every 300ms: 1.2s in all, more than one BodyTimeout
			time.Sleep(300 * time.Millisecond)
			if _, err := io.WriteString(c, chunk); err != nil {
				t.Fatal(err)
			}
		}
		resp, body := rawResponse(t, c, 2*time.Second)
		if resp.StatusCode != 200 || body != fmt.Sprintf("%d\n", n) {
			t.Fatalf("after %s: %d %q", time.Since(start), resp.StatusCode, body)
		}
	})
}

// A flood of slow bodies on more connections than the cap leaves /healthz
// answering within a second: at the cap, with none idle, a new connection
// closes the one reading a body the longest. The bodies' own deadline
// (3 s) is longer than the test, so only the shedding can admit /healthz.
func TestHTTPServer_SlowBodyFlood(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		limits := testLimits
		limits.MaxConns, limits.ReadTimeout, limits.WriteTimeout, limits.BodyTimeout = 20, 10*time.Second, 15*time.Second, 3*time.Second
		e, srv := serveHTTP(t, open(t), web.Config{}, limits)
		head := fmt.Sprintf("POST /api/v1/operations HTTP/1.1\r\nHost: settle\r\nAuthorization: Bearer %s\r\n"+
			"Content-Type: application/json\r\nContent-Length: 200\r\n\r\n", e.token)
		for range 40 {
			trickleBody(t, e.dial(), head, 200, 500*time.Millisecond)
		}
		time.Sleep(200 * time.Millisecond)
		hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
		for i := range 5 {
			start := time.Now()
			resp, err := hc.Get(e.base + "/healthz")
			if err != nil {
				t.Fatalf("/healthz %d during the flood: %v", i, err)
			}
			resp.Body.Close()
			if took := time.Since(start); resp.StatusCode != 200 || took > time.Second {
				t.Fatalf("/healthz %d during the flood: %d after %s", i, resp.StatusCode, took)
			}
			// The flood keeps coming.
			trickleBody(t, e.dial(), head, 200, 500*time.Millisecond)
		}
		// /healthz took the places of slow bodies (some of the flood took
		// those of others still silent, which counts as evicted).
		if srv.Shed() < 1 {
			t.Fatalf("%d slow bodies shed; want some", srv.Shed())
		}
		if n := srv.OpenConns(); n > limits.MaxConns {
			t.Fatalf("%d connections open, cap %d", n, limits.MaxConns)
		}
	})
}
