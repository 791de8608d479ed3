package web_test

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"settle/web"
)

// A tenant trickling the bodies of more creates than there are slots
// holds none of them: its creates are read before they take a slot, so
// another tenant's create is served at once, over real loopback TCP.
func TestLimits_SlowCreatesHoldNoSlot(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		limits := testLimits
		limits.ReadTimeout = 5 * time.Second // longer than the test: only the order of reading protects
		e, _ := serveHTTP(t, open(t), web.Config{Limits: web.Limits{MaxCreates: 2, CreateWait: 200 * time.Millisecond}}, limits)
		body := createWith("slow", `{"amount":1}`)
		for range 6 {
			c := e.dial()
			fmt.Fprintf(c, "POST /api/v1/operations HTTP/1.1\r\nHost: settle\r\nAuthorization: Bearer %s\r\n"+
				"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", e.token, len(body), body[:10])
		}
		time.Sleep(100 * time.Millisecond) // every slow create is in its handler
		other := e.newToken("globex")
		r := e.post(createWith("other-tenant", `{"amount":1}`), "Authorization", "Bearer "+other)
		if r.status != http.StatusCreated {
			t.Fatalf("another tenant's create during the slow ones: %d %s", r.status, r.body)
		}
	})
}

// One tenant holds at most MaxCreatesPerTenant slots: its next create is
// refused with 503 after the wait, while another tenant's is served from
// the slots left.
func TestLimits_CreatesPerTenant(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		s := open(t)
		g := gatedStore{store: s, entered: make(chan struct{}, 8), gate: make(chan struct{})}
		e := serve(t, s, web.Config{Store: g, Limits: web.Limits{MaxCreates: 3, MaxCreatesPerTenant: 2, CreateWait: 200 * time.Millisecond}})
		var wg sync.WaitGroup
		held := make(chan response, 2)
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				held <- e.post(createWith(fmt.Sprintf("held-%d", i), `{"amount":1}`))
			}()
		}
		<-g.entered
		<-g.entered
		wantError(t, e.post(createWith("third", `{"amount":1}`)), http.StatusServiceUnavailable, "overloaded")

		other := e.newToken("globex")
		done := make(chan response, 1)
		go func() { done <- e.post(createWith("globex-1", `{"amount":1}`), "Authorization", "Bearer "+other) }()
		<-g.entered // it found the slot acme could not take
		close(g.gate)
		if r := <-done; r.status != http.StatusCreated {
			t.Fatalf("another tenant's create: %d %s", r.status, r.body)
		}
		wg.Wait()
		close(held)
		for r := range held {
			if r.status != http.StatusCreated {
				t.Fatalf("a held create: %d %s", r.status, r.body)
			}
		}
	})
}

// A create announcing a body above the limit with Expect: 100-continue
// is refused with 413 at once, without a 100 Continue: the client never
// sends a byte of the body, so any answer at all is one given without
// reading it. (Not timed: a bound of 300 ms failed on a loaded machine.)
func TestLimits_ExpectContinueTooLarge(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		e, _ := serveHTTP(t, open(t), web.Config{}, testLimits)
		c := e.dial()
		fmt.Fprintf(c, "POST /api/v1/operations HTTP/1.1\r\nHost: settle\r\nAuthorization: Bearer %s\r\n"+
			"Content-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n", e.token, 100<<20)
		resp, body := rawResponse(t, c, 5*time.Second)
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		// The connection is closed after the answer: the body is not read.
		_ = c.SetReadDeadline(time.Now().Add(time.Second))
		if n, err := c.Read(make([]byte, 1)); n != 0 || (err != io.EOF && !isReset(err)) {
			t.Errorf("after the 413: %d bytes, %v; want the connection closed", n, err)
		}
	})
}

func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && !op.Timeout()
}
