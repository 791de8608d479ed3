package target

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The tests below run net/http's real transport against a raw TCP server
// on loopback, so that the server decides exactly when a connection dies:
// after reading a request and before answering it, or right after an
// answer, with no "Connection: close" to warn the client.

// serverAct is what the raw server does with the n-th request (from 1) on
// a connection.
type serverAct int

const (
	answer          serverAct = iota // answer 200 and keep the connection
	answerThenClose                  // answer 200, then close at once
	readThenClose                    // read the request in full, close without answering
	headThenClose                    // read the request line and headers, close without answering
)

type rawServer struct {
	ln      net.Listener
	act     func(n int) serverAct
	accepts atomic.Int64

	mu  sync.Mutex
	got map[string]int // request id → times received
	// late[i] is how many bytes connection i (from 0) received after its
	// last answer, or after it was accepted if it gave none.
	late []*atomic.Int64
}

func newRawServer(t *testing.T, act func(n int) serverAct) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{ln: ln, act: act, got: map[string]int{}}
	t.Cleanup(func() { ln.Close() })
	go s.serve()
	return s
}

func (s *rawServer) base() string { return "http://" + s.ln.Addr().String() }

func (s *rawServer) serve() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.accepts.Add(1)
		late := new(atomic.Int64)
		s.mu.Lock()
		s.late = append(s.late, late)
		s.mu.Unlock()
		go s.conn(c, late)
	}
}

// countingReader counts the bytes read from a connection since its last
// answer.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

func (s *rawServer) conn(c net.Conn, late *atomic.Int64) {
	defer c.Close()
	br := bufio.NewReader(countingReader{c, late})
	for n := 1; ; n++ {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		id := req.Header.Get("Idempotency-Key") + req.Header.Get("X-Test-Id")
		if id == "" {
			id = req.URL.RawQuery
		}
		s.mu.Lock()
		s.got[id]++
		s.mu.Unlock()
		act := s.act(n)
		if act == headThenClose {
			return
		}
		if _, err := io.Copy(io.Discard, req.Body); err != nil {
			return
		}
		if act == readThenClose {
			return
		}
		body := `{"id":"ch_` + id + `"}`
		late.Store(0)
		if _, err := fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body); err != nil {
			return
		}
		if act == answerThenClose {
			return
		}
	}
}

func (s *rawServer) received(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got[id]
}

func (s *rawServer) lateBytes(conn int) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.late[conn].Load()
}

func TestClient_ReusesConnections(t *testing.T) {
	t.Parallel()
	srv := newRawServer(t, func(int) serverAct { return answer })
	set, c := stripeLike(t, srv.base())
	cl := stripeClient(t, set, acme)
	const n = 50
	for i := range n {
		a := cl.Create(context.Background(), c, "acme", []byte(charge), fmt.Sprintf("key-%d", i), "")
		if a.Status != http.StatusOK {
			t.Fatalf("send %d: %+v", i, a)
		}
		if a := cl.Lookup(context.Background(), c, "acme", fmt.Sprintf("ref-%d", i), ""); a.Status != http.StatusOK {
			t.Fatalf("lookup %d: %+v", i, a)
		}
	}
	if got := srv.accepts.Load(); got != 1 {
		t.Fatalf("%d sends and %d lookups opened %d connections; want 1", n, n, got)
	}
}

// A create with no body and an Idempotency-Key is "replayable" to net/http,
// so each goes over a connection of its own, never a reused one.
func TestClient_BodylessCreateGetsFreshConnection(t *testing.T) {
	t.Parallel()
	srv := newRawServer(t, func(int) serverAct { return answer })
	cl := NewClient(ClientOptions{})
	for i := range 5 {
		req, _ := http.NewRequest(http.MethodPost, srv.base()+"/v1/capture", nil)
		req.Header.Set("Idempotency-Key", fmt.Sprintf("empty-%d", i))
		resp, err := cl.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if got := srv.accepts.Load(); got != 5 {
		t.Fatalf("5 bodyless creates used %d connections; want 5", got)
	}
}

// The target closes a reused connection as the next request is written.
// Every create reaches it at most once, and one that got no answer is
// reported as sent and unanswered (ambiguous), never as not sent.
func TestClient_IdleCloseAsRequestWritten(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		act  func(n int) serverAct
	}{
		{"ReadThenClose", func(n int) serverAct { return map[bool]serverAct{true: answer, false: readThenClose}[n == 1] }},
		{"HeadersThenClose", func(n int) serverAct { return map[bool]serverAct{true: answer, false: headThenClose}[n == 1] }},
		{"ClosedAfterAnswer", func(int) serverAct { return answerThenClose }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newRawServer(t, tc.act)
			set, c := stripeLike(t, srv.base())
			cl := stripeClient(t, set, acme)
			const n = 40
			unanswered := 0
			for i := range n {
				key := fmt.Sprintf("key-%d", i)
				a := cl.Create(context.Background(), c, "acme", []byte(charge), key, "")
				got := srv.received(key)
				if got > 1 {
					t.Fatalf("send %d reached the target %d times", i, got)
				}
				if !a.Sent() {
					t.Fatalf("send %d reported as not sent: %+v", i, a)
				}
				switch {
				case a.Answered() && got != 1:
					t.Fatalf("send %d answered but received %d times", i, got)
				case !a.Answered():
					unanswered++
					if a.Failure == "" {
						t.Fatalf("send %d: no answer and no failure: %+v", i, a)
					}
				}
			}
			if tc.name != "ClosedAfterAnswer" && unanswered != n/2 {
				t.Fatalf("%d of %d sends unanswered; want every second one", unanswered, n)
			}
			t.Logf("%d sends, %d unanswered (ambiguous), %d connections", n, unanswered, srv.accepts.Load())
		})
	}
}

// The hole the client closes: net/http itself re-sends a bodyless POST with
// an Idempotency-Key header when a reused connection dies after the request
// was written. A plain keep-alive transport delivers it twice; the client's
// delivers it once and reports the failure.
func TestClient_BodylessCreateNotResent(t *testing.T) {
	t.Parallel()
	act := func(n int) serverAct { return map[bool]serverAct{true: answer, false: readThenClose}[n == 1] }
	send := func(t *testing.T, rt http.RoundTripper, base, id string) error {
		req, _ := http.NewRequest(http.MethodPost, base+"/v1/capture", nil)
		req.Header.Set("Idempotency-Key", id)
		resp, err := (&http.Client{Transport: rt}).Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return err
	}
	t.Run("PlainTransport", func(t *testing.T) {
		srv := newRawServer(t, act)
		tr := &http.Transport{}
		defer tr.CloseIdleConnections()
		if err := send(t, tr, srv.base(), "warm"); err != nil {
			t.Fatal(err)
		}
		_ = send(t, tr, srv.base(), "twice")
		if got := srv.received("twice"); got != 2 {
			t.Fatalf("net/http delivered the bodyless POST %d times; this test expects Go's re-send (2)", got)
		}
	})
	t.Run("Client", func(t *testing.T) {
		srv := newRawServer(t, act)
		cl := NewClient(ClientOptions{})
		for i := range 6 {
			id := fmt.Sprintf("once-%d", i)
			err := send(t, cl.http.Transport, srv.base(), id)
			if got := srv.received(id); got != 1 {
				t.Fatalf("request %d delivered %d times (err %v); want once", i, got, err)
			}
		}
	})
}

// breakingDialer dials real loopback connections whose next Write, once
// broken, fails before a byte leaves the process: the state net/http finds
// when a reused connection turns out dead before anything was written.
type breakingDialer struct {
	mu    sync.Mutex
	conns []*breakableConn
}

type breakableConn struct {
	net.Conn
	broken atomic.Bool
}

func (b *breakableConn) Write(p []byte) (int, error) {
	if b.broken.Load() {
		b.Conn.Close()
		return 0, syscall.EPIPE
	}
	return b.Conn.Write(p)
}

func (d *breakingDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	bc := &breakableConn{Conn: c}
	d.mu.Lock()
	d.conns = append(d.conns, bc)
	d.mu.Unlock()
	return bc, nil
}

func (d *breakingDialer) breakConn(i int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.conns[i].broken.Store(true)
}

// A reused connection found dead before anything was written: net/http
// retries only a request without a body (a lookup) on a new connection,
// and the dead connection received none of it. A create is not retried
// even then; it is reported unanswered, which is conservative.
func TestClient_NothingWrittenRetry(t *testing.T) {
	t.Parallel()
	srv := newRawServer(t, func(int) serverAct { return answer })
	set, c := stripeLike(t, srv.base())
	secrets, err := ReadSecrets(set, func(string) string { return "sk_test_4eC39HqLyjWDarjtT1zdp7dc" })
	if err != nil {
		t.Fatal(err)
	}
	d := &breakingDialer{}
	cl := NewClient(ClientOptions{Secrets: secrets, Params: acme})
	cl.http.Transport = newOnceTransport(d.dial)

	if a := cl.Lookup(context.Background(), c, "acme", "ref-1", ""); a.Status != http.StatusOK {
		t.Fatalf("first lookup: %+v", a)
	}
	d.breakConn(0)
	if a := cl.Lookup(context.Background(), c, "acme", "ref-2", ""); a.Status != http.StatusOK {
		t.Fatalf("lookup on a dead reused connection: %+v; want net/http's retry answered", a)
	}
	if srv.accepts.Load() != 2 || srv.lateBytes(0) != 0 || srv.received(lookupQuery(t, c, "ref-2")) != 1 {
		t.Fatalf("accepts %d, bytes on the dead connection %d, lookup received %d; want 2, 0, 1",
			srv.accepts.Load(), srv.lateBytes(0), srv.received(lookupQuery(t, c, "ref-2")))
	}

	d.breakConn(1)
	a := cl.Create(context.Background(), c, "acme", []byte(charge), "key-dead", "")
	if a.Answered() || !a.Sent() || a.Failure == "" {
		t.Fatalf("create on a dead reused connection: %+v; want sent, unanswered", a)
	}
	if srv.received("key-dead") != 0 || srv.lateBytes(1) != 0 || srv.accepts.Load() != 2 {
		t.Fatalf("create received %d times, %d bytes on the dead connection, %d accepts; want 0, 0, 2 (no retry)",
			srv.received("key-dead"), srv.lateBytes(1), srv.accepts.Load())
	}
}

// The common case of a connection closed while idle: the transport sees
// the close before the next request and dials a new connection, so no
// retry is needed and the closed one received nothing more.
func TestClient_IdleCloseSeenBeforeWrite(t *testing.T) {
	t.Parallel()
	srv := newRawServer(t, func(int) serverAct { return answerThenClose })
	set, c := stripeLike(t, srv.base())
	cl := stripeClient(t, set, acme)
	for i := range 5 {
		if i > 0 {
			time.Sleep(200 * time.Millisecond) // let the transport read the close
		}
		key := fmt.Sprintf("key-%d", i)
		if a := cl.Create(context.Background(), c, "acme", []byte(charge), key, ""); a.Status != http.StatusOK || srv.received(key) != 1 {
			t.Fatalf("send %d: %+v, received %d times", i, a, srv.received(key))
		}
	}
	for i := range 4 {
		if got := srv.lateBytes(i); got != 0 {
			t.Fatalf("closed connection %d received %d bytes after its answer; want 0", i, got)
		}
	}
}

func lookupQuery(t *testing.T, c *Contract, ref string) string {
	t.Helper()
	_, u, err := c.LookupURL(ref, "")
	if err != nil {
		t.Fatal(err)
	}
	_, q, _ := strings.Cut(u, "?")
	return q
}
