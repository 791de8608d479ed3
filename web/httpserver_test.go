package web_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"settle/ledger/ledgertest"
	"settle/ledger/storetest"
	"settle/web"
)

// testLimits are ServerLimits small enough for tests to watch every one
// of them act within a second or two.
var testLimits = web.ServerLimits{
	ReadHeaderTimeout: 500 * time.Millisecond,
	ReadTimeout:       time.Second,
	WriteTimeout:      3 * time.Second,
	IdleTimeout:       500 * time.Millisecond,
	MaxHeaderBytes:    16 << 10,
	MaxConns:          64,
}

// serveHTTP serves cfg over s the way settle serve does: web.New behind
// web.NewHTTPServer with limits, on a real loopback listener.
func serveHTTP(t *testing.T, s store, cfg web.Config, limits web.ServerLimits) (*env, *web.HTTPServer) {
	t.Helper()
	cfg.Store = s
	if cfg.Targets == nil {
		cfg.Targets = testTargets
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := web.NewHTTPServer(web.New(cfg), limits)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	e := &env{t: t, base: "http://" + ln.Addr().String(), store: s}
	e.api = loadAPIDoc(t, e.base)
	e.client = &http.Client{Timeout: 5 * time.Second,
		Transport: checkingTransport{t: t, doc: e.api, next: &http.Transport{}}}
	e.token = e.newToken("acme")
	return e, srv
}

func (e *env) addr() string { return strings.TrimPrefix(e.base, "http://") }

// dial opens a raw TCP connection to the server.
func (e *env) dial() net.Conn {
	e.t.Helper()
	c, err := net.DialTimeout("tcp", e.addr(), 5*time.Second)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { c.Close() })
	return c
}

// closedWithin reads from c until the server closes it and returns how
// long that took from start and what the server sent; it fails the test
// if c is still open at start+within.
func closedWithin(t *testing.T, c net.Conn, start time.Time, within time.Duration) (time.Duration, string) {
	t.Helper()
	_ = c.SetReadDeadline(start.Add(within))
	got, err := io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the connection is still open %s after the start (got %q)", within, got)
	}
	return time.Since(start), string(got)
}

// Each limit of the HTTP server, over real loopback TCP: a slow body or a
// slow header is cut off at its deadline whatever its pace, an idle
// keep-alive connection and a silent one are closed, an oversized header
// is refused.
func TestHTTPServer_Timeouts(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		e, _ := serveHTTP(t, open(t), web.Config{}, testLimits)
		const bodyLen = 200
		requestHead := fmt.Sprintf("POST /api/v1/operations HTTP/1.1\r\nHost: settle\r\nAuthorization: Bearer %s\r\n"+
			"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n", e.token, bodyLen)

		// trickle writes head, then one byte of body every pace until the
		// server hangs up or the test ends.
		trickle := func(t *testing.T, c net.Conn, head string, pace time.Duration) {
			if _, err := io.WriteString(c, head); err != nil {
				t.Fatal(err)
			}
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < bodyLen; i++ {
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
			t.Cleanup(func() { close(stop); wg.Wait() })
		}

		for name, pace := range map[string]time.Duration{
			"BodyOneByteEvery2s":    2 * time.Second,
			"BodyOneByteEvery100ms": 100 * time.Millisecond, // never idle for long: only a total deadline stops it
		} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				c := e.dial()
				start := time.Now()
				trickle(t, c, requestHead, pace)
				took, got := closedWithin(t, c, start, testLimits.ReadTimeout+2*time.Second)
				if took < testLimits.ReadTimeout-100*time.Millisecond {
					t.Fatalf("closed after %s, before the read timeout %s", took, testLimits.ReadTimeout)
				}
				if got != "" && !strings.HasPrefix(got, "HTTP/1.1 4") {
					t.Fatalf("answer to a cut-off body: %q", got)
				}
			})
		}

		t.Run("HeaderOneByteEvery100ms", func(t *testing.T) {
			t.Parallel()
			c := e.dial()
			start := time.Now()
			go func() {
				for _, b := range []byte("GET /healthz HTTP/1.1\r\nHost: settle\r\nX-Slow: " + strings.Repeat("a", 100)) {
					time.Sleep(100 * time.Millisecond)
					if _, err := c.Write([]byte{b}); err != nil {
						return
					}
				}
			}()
			closedWithin(t, c, start, testLimits.ReadHeaderTimeout+2*time.Second)
		})

		t.Run("Silent", func(t *testing.T) {
			t.Parallel()
			c := e.dial()
			closedWithin(t, c, time.Now(), testLimits.ReadHeaderTimeout+2*time.Second)
		})

		t.Run("IdleKeepAlive", func(t *testing.T) {
			t.Parallel()
			c := e.dial()
			r := bufio.NewReader(c)
			for i := range 2 { // the connection is reused while it is busy enough
				if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: settle\r\n\r\n"); err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				resp, err := http.ReadResponse(r, nil)
				if err != nil {
					t.Fatalf("response %d: %v", i, err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || resp.Close {
					t.Fatalf("response %d: %d, close=%v", i, resp.StatusCode, resp.Close)
				}
			}
			start := time.Now()
			_ = c.SetReadDeadline(start.Add(testLimits.IdleTimeout + 2*time.Second))
			if _, err := r.ReadByte(); !errors.Is(err, io.EOF) {
				t.Fatalf("idle keep-alive connection: %v after %s, want it closed (EOF) after the idle timeout %s",
					err, time.Since(start), testLimits.IdleTimeout)
			}
		})

		t.Run("HeaderTooLarge", func(t *testing.T) {
			t.Parallel()
			c := e.dial()
			_ = c.SetDeadline(time.Now().Add(5 * time.Second))
			_, _ = io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: settle\r\nX-Big: "+strings.Repeat("b", 64<<10)+"\r\n\r\n")
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
				t.Fatalf("a 64 KiB header with MaxHeaderBytes %d: %d, want 431", testLimits.MaxHeaderBytes, resp.StatusCode)
			}
		})
	})
}

// openFiles counts this process's open file descriptors.
func openFiles(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(fds)
}

// limitOpenFiles sets the soft limit on open files to n for the rest of
// the test (raising the hard limit is not needed: n is checked against
// it).
func limitOpenFiles(t *testing.T, n uint64) {
	t.Helper()
	var was syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &was); err != nil {
		t.Fatal(err)
	}
	if n > was.Max {
		t.Fatalf("the test needs %d open files; the hard limit is %d", n, was.Max)
	}
	lim := was
	lim.Cur = n
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &was) })
}

// A flood of 1,000 connections that never send a byte does not lock
// anyone out. The process may open only what the flood itself needs plus
// a few hundred descriptors (the flood's sockets live in this process
// too), so a server that accepted every stranger's socket would run out of
// descriptors; settle's holds at most MaxConns, evicting the longest-idle
// connection to admit a new one, and keeps serving /healthz and the API
// (on both stores, whose own connections need descriptors too).
//
// Not parallel: the open-files limit is the whole process's.
func TestHTTPServer_IdleFlood(t *testing.T) {
	const flood = 1000
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		s := h.New(t, time.Now).(store)
		e, srv := serveHTTP(t, s, web.Config{}, web.ServerLimits{ReadHeaderTimeout: time.Minute,
			ReadTimeout: time.Minute, WriteTimeout: time.Minute, IdleTimeout: time.Minute, MaxConns: testLimits.MaxConns})
		// A new connection for every request: each must win its place.
		e.client = &http.Client{Timeout: 5 * time.Second,
			Transport: checkingTransport{t: t, doc: e.api, next: &http.Transport{DisableKeepAlives: true}}}
		if r := e.post(charge); r.status != http.StatusCreated { // warm the store's pool
			t.Fatalf("POST before the flood: %d %s", r.status, r.body)
		}
		limitOpenFiles(t, uint64(openFiles(t)+flood+300))

		conns := make([]net.Conn, 0, flood)
		t.Cleanup(func() {
			for _, c := range conns {
				c.Close()
			}
		})
		for i := range flood {
			c, err := net.DialTimeout("tcp", e.addr(), 5*time.Second)
			if err != nil {
				t.Fatalf("opening idle connection %d: %v (server connections open: %d)", i, err, srv.OpenConns())
			}
			conns = append(conns, c)
		}
		// Give the server time to accept what it will of the flood.
		time.Sleep(200 * time.Millisecond)
		if n := srv.OpenConns(); n > testLimits.MaxConns {
			t.Fatalf("%d connections open, cap %d", n, testLimits.MaxConns)
		}

		start := time.Now()
		for i := range 3 {
			if r := e.do(http.MethodGet, "/healthz", "", nil); r.status != http.StatusOK {
				t.Fatalf("/healthz %d under the flood: %d", i, r.status)
			}
			if r := e.do(http.MethodGet, "/api/v1/operations", "", nil); r.status != http.StatusOK {
				t.Fatalf("list %d under the flood: %d %s", i, r.status, r.body)
			}
			if r := e.post(strings.Replace(charge, "approval-1", fmt.Sprintf("flood-%d", i), 1)); r.status != http.StatusCreated {
				t.Fatalf("create %d under the flood: %d %s", i, r.status, r.body)
			}
		}
		if srv.Evicted() < flood-int64(testLimits.MaxConns) {
			t.Fatalf("%d idle connections evicted; want at least %d", srv.Evicted(), flood-testLimits.MaxConns)
		}
		if took := time.Since(start); took > 3*time.Second {
			t.Fatalf("nine requests under the flood took %s", took)
		}
		if n := srv.OpenConns(); n > testLimits.MaxConns {
			t.Fatalf("%d connections open, cap %d", n, testLimits.MaxConns)
		}
	})
}

// Connections with a request in progress are never evicted: at the cap,
// with every connection busy, a new one waits (in the listen queue) until
// one is free, and is then served.
func TestHTTPServer_BusyConnsNotEvicted(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var entered sync.WaitGroup
	entered.Add(2)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			entered.Done()
			<-release
		}
		fmt.Fprintln(w, "ok")
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	limits := testLimits
	limits.MaxConns = 2
	srv := web.NewHTTPServer(h, limits)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	base := "http://" + ln.Addr().String()

	client := func() *http.Client {
		return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	}
	slow := make(chan int, 2)
	for range 2 {
		go func() {
			resp, err := client().Get(base + "/slow")
			if err != nil {
				slow <- 0
				return
			}
			resp.Body.Close()
			slow <- resp.StatusCode
		}()
	}
	entered.Wait()
	fast := make(chan time.Time, 1)
	go func() {
		resp, err := client().Get(base + "/fast")
		if err == nil {
			resp.Body.Close()
		}
		fast <- time.Now()
	}()
	select {
	case <-fast:
		t.Fatal("a third connection was served while two requests held the cap of 2")
	case <-time.After(300 * time.Millisecond):
	}
	released := time.Now()
	close(release)
	for range 2 {
		if s := <-slow; s != http.StatusOK {
			t.Fatalf("a busy request was cut off: %d", s)
		}
	}
	if at := <-fast; at.Before(released) {
		t.Fatal("the waiting connection was served before a slot was free")
	}
}

// A response that is not written by WriteTimeout after the request's
// header was read is abandoned: the client sees the connection end, not a
// late answer, and the server's goroutine is not held by a slow reader.
func TestHTTPServer_WriteTimeout(t *testing.T) {
	t.Parallel()
	limits := testLimits
	limits.WriteTimeout = limits.ReadTimeout + 200*time.Millisecond
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(limits.WriteTimeout + 300*time.Millisecond)
		fmt.Fprintln(w, "late")
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := web.NewHTTPServer(h, limits)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	c, err := net.DialTimeout("tcp", ln.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	if _, err := io.WriteString(c, "GET /slow HTTP/1.1\r\nHost: settle\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	if _, got := closedWithin(t, c, start, limits.WriteTimeout+3*time.Second); got != "" {
		t.Fatalf("a response later than the write timeout %s was delivered: %q", limits.WriteTimeout, got)
	}
}
