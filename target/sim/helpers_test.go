package sim_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"settle/target/sim"
)

// fakeClock is an injected clock that tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// start serves cfg on loopback until the test ends.
func start(t *testing.T, cfg sim.Config) *sim.Server {
	t.Helper()
	srv, err := sim.Start(cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

// plainClient opens a fresh connection per request, so each injected reset or
// drop hits a connection of its own and no result depends on pooling.
func plainClient(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: &http.Transport{DisableKeepAlives: true}}
}

var client = plainClient(10 * time.Second)

// reply is a response read in full.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// fields decodes a JSON object body.
func (r reply) fields(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("decode %q: %v", r.body, err)
	}
	return m
}

// errorCode returns the "error" member of a JSON error body.
func (r reply) errorCode(t *testing.T) string {
	t.Helper()
	code, _ := r.fields(t)["error"].(string)
	return code
}

func send(c *http.Client, method, url string, header map[string]string, body []byte) (reply, error) {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		return reply{}, err
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: b}, err
}

func mustSend(t *testing.T, method, url string, header map[string]string, body []byte) reply {
	t.Helper()
	r, err := send(client, method, url, header, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return r
}

// charge is a valid create body for ref; amount varies the payload.
func charge(ref string, amount int) []byte {
	return fmt.Appendf(nil, `{"amount":%d,"currency":"eur","metadata":{"settle_ref":%q,"settle_tenant":"acme"}}`, amount, ref)
}

// create posts a charge with an Idempotency-Key ("" sends none).
func create(t *testing.T, srv *sim.Server, key string, body []byte) reply {
	t.Helper()
	h := map[string]string{"Content-Type": "application/json"}
	if key != "" {
		h["Idempotency-Key"] = key
	}
	return mustSend(t, http.MethodPost, srv.URL()+"/v1/charges", h, body)
}

// remoteObjects counts remote effects the way drills do: GET /_sim/objects.
func remoteObjects(t *testing.T, srv *sim.Server) []sim.Object {
	t.Helper()
	r := mustSend(t, http.MethodGet, srv.URL()+"/_sim/objects", nil, nil)
	var objs []sim.Object
	if err := json.Unmarshal(r.body, &objs); err != nil {
		t.Fatalf("decode objects %q: %v", r.body, err)
	}
	return objs
}

func wantStatus(t *testing.T, r reply, want int) {
	t.Helper()
	if r.status != want {
		t.Fatalf("status = %d, want %d; body %s", r.status, want, r.body)
	}
}

func wantObjects(t *testing.T, srv *sim.Server, want int) []sim.Object {
	t.Helper()
	objs := remoteObjects(t, srv)
	if len(objs) != want {
		t.Fatalf("remote objects = %d, want %d: %+v", len(objs), want, objs)
	}
	return objs
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
