package web_test

import (
	"bufio"
	"bytes"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"settle/web"
)

// logBuffer collects a server's log lines; safe for the server's
// goroutines and the test.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// requestLine returns the request log line carrying id, or "".
func (b *logBuffer) requestLine(id string) string {
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.Contains(l, "msg=request ") && strings.Contains(l, " request_id="+id) {
			return l
		}
	}
	return ""
}

var generatedID = regexp.MustCompile(`^[A-Za-z0-9-]{1,64}$`)

// A request id is settle's own: an inbound X-Request-Id is kept only when
// it is short and plain, otherwise replaced by a fresh one, and the
// response header and the log line carry the id chosen. The ids are sent
// over raw TCP so that nothing in a client library cleans them first.
func TestRequestID_OnlyPlainIDsKept(t *testing.T) {
	t.Parallel()
	logs := &logBuffer{}
	// The ids are sent to /healthz, whose lines are DEBUG.
	srv := httptest.NewServer(web.New(web.Config{Targets: testTargets,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}))
	t.Cleanup(srv.Close)

	send := func(t *testing.T, headerLines string) (http.Header, int) {
		t.Helper()
		conn, err := net.DialTimeout("tcp", srv.Listener.Addr().String(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := conn.Write([]byte("GET /healthz HTTP/1.1\r\nHost: settle\r\n" + headerLines +
			"Connection: close\r\n\r\n")); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.Header, resp.StatusCode
	}

	kept := map[string]string{
		"UUID":     "0b6c2a52-3f1e-4b7a-9a57-3d2b1c0e9f11",
		"Short":    "a",
		"Max64":    strings.Repeat("A", 64),
		"Alphanum": "req-2030-01-02-Z9",
	}
	for name, id := range kept {
		t.Run("Kept/"+name, func(t *testing.T) {
			h, status := send(t, "X-Request-Id: "+id+"\r\n")
			if status != http.StatusOK || h.Get("X-Request-Id") != id {
				t.Fatalf("status %d, X-Request-Id %q; want %q kept", status, h.Get("X-Request-Id"), id)
			}
			waitLogLine(t, logs, id)
		})
	}

	replaced := map[string]string{
		"TooLong":      strings.Repeat("A", 65),
		"VeryLong":     strings.Repeat("x", 8000),
		"Spaces":       "abc def",
		"Unicode":      "zählung-1",
		"RTLOverride":  "abc\u202edef",
		"LogInjection": `x" level=ERROR msg="forged`,
		"Equals":       "a=b",
		"Underscore":   "a_b",
		"Dots":         "../../etc",
		"Percent":      "%0d%0a",
		"TabInside":    "a\tb",
		"NULInside":    "a\x00b",
		"Empty":        "",
		"OnlySpaces":   "   ",
		"NonUTF8":      "a\xff\xfeb",
	}
	for name, id := range replaced {
		t.Run("Replaced/"+name, func(t *testing.T) {
			h, status := send(t, "X-Request-Id: "+id+"\r\n")
			got := h.Get("X-Request-Id")
			if status == http.StatusBadRequest {
				// net/http itself refuses a few (NUL); nothing reached the
				// handlers or the log.
				return
			}
			if status != http.StatusOK {
				t.Fatalf("status %d", status)
			}
			if got == id || !generatedID.MatchString(got) {
				t.Fatalf("X-Request-Id %.80q for inbound %.80q; want a fresh plain id", got, id)
			}
			line := waitLogLine(t, logs, got)
			if id != "" && strings.TrimSpace(id) != "" && strings.Contains(line, id) {
				t.Fatalf("the inbound id reached the log: %s", line)
			}
			if strings.Contains(logs.String(), "forged") {
				t.Fatal("log injection: a request id from the request reached the log")
			}
		})
	}

	t.Run("Absent", func(t *testing.T) {
		h, _ := send(t, "")
		if got := h.Get("X-Request-Id"); !generatedID.MatchString(got) {
			t.Fatalf("X-Request-Id %q", got)
		}
	})
}

// waitLogLine waits briefly for the request log line of id (the logger
// writes after the response is sent) and returns it.
func waitLogLine(t *testing.T, logs *logBuffer, id string) string {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		if l := logs.requestLine(id); l != "" {
			return l
		}
		if time.Now().After(deadline) {
			t.Fatalf("no request log line with request_id=%s in:\n%s", id, logs.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Health probes are logged at DEBUG, so that at the default level a load
// balancer's probes do not drown the log; other requests at INFO.
func TestRequestLog_ProbesAtDebug(t *testing.T) {
	t.Parallel()
	logs := &logBuffer{}
	srv := httptest.NewServer(web.New(web.Config{Targets: testTargets,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}))
	t.Cleanup(srv.Close)
	for _, path := range []string{"/healthz", "/api/v1/operations/x"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		id := resp.Header.Get("X-Request-Id")
		line := waitLogLine(t, logs, id)
		want := "level=INFO"
		if path == "/healthz" {
			want = "level=DEBUG"
		}
		if !strings.Contains(line, want) {
			t.Errorf("GET %s logged %q; want %s", path, line, want)
		}
	}
}
