package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"settle/target"
)

// fast retries quickly, and gives each attempt a second.
var fast = WithRetry(RetryPolicy{MaxAttempts: 8, Initial: 10 * time.Millisecond, Max: 50 * time.Millisecond,
	AttemptTimeout: 3 * time.Second})

func charge(intent string, amount int) Operation {
	return Operation{Target: "demo", Type: "charge", IntentRef: intent,
		Payload: map[string]any{"amount": amount, "currency": "EUR"}}
}

// count is how many operations settle holds for intent.
func count(t *testing.T, c *Client, intent string) int {
	t.Helper()
	n := 0
	for _, err := range c.List(context.Background(), ListOptions{IntentRef: intent}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}

// The client against a real `settle serve` on each store: one server per
// store, its subtests in order (some hold the server's only create slot).
func TestClient_AgainstSettle(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, s *settled) {
		ctx := context.Background()
		direct := s.client(t, fast)
		calls := newCallbackRecorder(t, s)

		t.Run("Register", func(t *testing.T) {
			e, created, err := direct.Register(ctx, charge("reg-1", 5000))
			if err != nil || !created || e.ID == "" || e.IntentRef != "reg-1" || e.Tenant != "acme" {
				t.Fatalf("first: %+v %v %v", e, created, err)
			}
			again, created, err := direct.Register(ctx, Operation{Target: "demo", Type: "charge", IntentRef: "reg-1",
				Payload: map[string]any{"currency": "EUR", "amount": 5000}})
			if err != nil || created || again.ID != e.ID {
				t.Fatalf("repeat: %+v %v %v", again, created, err)
			}
			p := newFaultProxy(t, s.URL)
			_, _, err = s.client(t, fast, WithHTTPClient(&http.Client{})).withBase(t, p.URL).Register(ctx, charge("reg-1", 4000))
			var ae *APIError
			if !errors.Is(err, ErrPayloadConflict) || !errors.As(err, &ae) || ae.Status != http.StatusConflict || p.forwarded() != 1 {
				t.Fatalf("conflict: %v after %d POSTs, want ErrPayloadConflict at once", err, p.forwarded())
			}
		})

		t.Run("DroppedAnswers", func(t *testing.T) {
			// Every fault after settle committed the first attempt.
			p := newFaultProxy(t, s.URL, "drop", "stall", "500", "502", "drop")
			c := s.client(t, WithRetry(RetryPolicy{MaxAttempts: 8, Initial: 10 * time.Millisecond,
				Max: 50 * time.Millisecond, AttemptTimeout: time.Second})).withBase(t, p.URL)
			e, created, err := c.Register(ctx, charge("dropped-1", 700))
			if err != nil || e.ID == "" {
				t.Fatalf("Register through faults: %v", err)
			}
			if created || p.forwarded() < 6 {
				t.Fatalf("created %v after %d POSTs; want the sixth's 200", created, p.forwarded())
			}
			if n := count(t, direct, "dropped-1"); n != 1 {
				t.Fatalf("%d operations for one intent", n)
			}

			// Five callers of one intent at once, each answer lost at first.
			p = newFaultProxy(t, s.URL, "drop", "drop", "drop", "drop", "drop", "500", "500")
			c = s.client(t, fast).withBase(t, p.URL)
			var wg sync.WaitGroup
			ids := make(chan string, 5)
			for range 5 {
				wg.Go(func() {
					e, _, err := c.Register(ctx, charge("dropped-2", 800))
					if err != nil {
						t.Errorf("concurrent Register: %v", err)
					}
					ids <- e.ID
				})
			}
			wg.Wait()
			close(ids)
			first := ""
			for id := range ids {
				if first == "" {
					first = id
				}
				if id != first {
					t.Fatalf("two operations for one intent: %s, %s", first, id)
				}
			}
			if n := count(t, direct, "dropped-2"); n != 1 {
				t.Fatalf("%d operations for one intent", n)
			}

			// Retries end: with every answer lost, the last error is
			// returned after MaxAttempts.
			p = newFaultProxy(t, s.URL, "502", "502", "502")
			c = s.client(t, WithRetry(RetryPolicy{MaxAttempts: 3, Initial: time.Millisecond})).withBase(t, p.URL)
			var ae *APIError
			if _, _, err := c.Register(ctx, charge("dropped-3", 1)); !errors.As(err, &ae) || ae.Status != http.StatusBadGateway ||
				ae.Code != "" || p.forwarded() != 3 {
				t.Fatalf("after 3 lost answers: %v, %d POSTs", err, p.forwarded())
			}
		})

		t.Run("Reads", func(t *testing.T) {
			var want []string
			for i := range 5 {
				e, _, err := direct.Register(ctx, charge(fmt.Sprintf("page-%d", i), 10+i))
				if err != nil {
					t.Fatal(err)
				}
				want = append([]string{e.ID}, want...) // newest first
			}
			got, err := direct.Get(ctx, strings.ToUpper(want[0]))
			if err != nil || got.ID != want[0] || got.Type != "charge" || got.PayloadHash == "" {
				t.Fatalf("Get: %+v %v", got, err)
			}
			found, err := direct.FindByIntent(ctx, "charge", "page-3")
			if err != nil || found.ID != want[1] {
				t.Fatalf("FindByIntent: %+v %v", found, err)
			}
			if _, err := direct.FindByIntent(ctx, "refund", "page-3"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("FindByIntent of another type: %v", err)
			}
			var all []string
			for e, err := range direct.List(ctx, ListOptions{PageSize: 2}) {
				if err != nil {
					t.Fatal(err)
				}
				if strings.HasPrefix(e.IntentRef, "page-") {
					all = append(all, e.ID)
				}
			}
			if strings.Join(all, " ") != strings.Join(want, " ") {
				t.Fatalf("List in pages of 2: %v, want %v", all, want)
			}
			n := 0
			for range direct.List(ctx, ListOptions{PageSize: 1}) {
				if n++; n == 2 {
					break // stops fetching
				}
			}
			for _, err := range direct.List(ctx, ListOptions{State: "DONE"}) {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("a bad state: %v", err)
				}
			}
			e, err := direct.Await(ctx, want[0], 50*time.Millisecond)
			if err != nil || e.State != Succeeded || e.RemoteRef == "" {
				t.Fatalf("Await: %+v %v", e, err)
			}
		})

		t.Run("ErrorCodes", func(t *testing.T) { errorCodes(t, s, direct) })

		t.Run("Callbacks", func(t *testing.T) {
			e, _, err := direct.Register(ctx, charge("cb-1", 42))
			if err != nil {
				t.Fatal(err)
			}
			calls.check(t, e.ID)
		})
	})
}

// withBase points a copy of c at another base URL (a proxy).
func (c *Client) withBase(t *testing.T, base string) *Client {
	t.Helper()
	n, err := New(base, c.token, WithHTTPClient(c.http), WithRetry(c.retry))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// rewrite is a transport that changes each request before sending it.
type rewrite func(*http.Request)

func (f rewrite) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	f(r)
	return http.DefaultTransport.RoundTrip(r)
}

func randomUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// errorCodes drives the real server to every error code of the API and
// checks each maps to its sentinel, and to no other.
func errorCodes(t *testing.T, s *settled, direct *Client) {
	ctx := context.Background()
	once := WithRetry(RetryPolicy{MaxAttempts: 1, AttemptTimeout: 20 * time.Second})
	via := func(f rewrite) *Client { return s.client(t, once, WithHTTPClient(&http.Client{Transport: f})) }
	all := []error{ErrMalformedRequest, ErrUnauthorized, ErrNotFound, ErrMethodNotAllowed, ErrPayloadConflict,
		ErrBodyTooLarge, ErrUnsupportedMediaType, ErrInvalid, ErrRateLimited, ErrInternal, ErrOverloaded}
	check := func(name string, err error, want error, status int) {
		t.Helper()
		var ae *APIError
		if !errors.As(err, &ae) || ae.Status != status || !errors.Is(err, want) || ae.Message == "" || ae.RequestID == "" {
			t.Errorf("%s: %v (%#v), want %v with status %d", name, err, ae, want, status)
			return
		}
		for _, other := range all {
			if other != want && errors.Is(err, other) {
				t.Errorf("%s: %v also matches %v", name, err, other)
			}
		}
	}
	_, _, err := via(func(r *http.Request) {
		const truncated = `{"target":`
		r.Body, r.ContentLength, r.GetBody = io.NopCloser(strings.NewReader(truncated)), int64(len(truncated)), nil
	}).Register(ctx, charge("e-400", 1))
	check("400", err, ErrMalformedRequest, 400)

	bad, _ := New(s.URL, "stl_"+strings.Repeat("A", 43))
	_, err = bad.Get(ctx, randomUUID())
	check("401", err, ErrUnauthorized, 401)

	_, err = direct.Get(ctx, randomUUID())
	check("404", err, ErrNotFound, 404)

	_, err = via(func(r *http.Request) { r.Method = http.MethodDelete }).Get(ctx, randomUUID())
	check("405", err, ErrMethodNotAllowed, 405)

	if _, _, err := direct.Register(ctx, charge("e-409", 1)); err != nil {
		t.Fatal(err)
	}
	_, _, err = direct.Register(ctx, charge("e-409", 2))
	check("409", err, ErrPayloadConflict, 409)

	_, _, err = direct.Register(ctx, Operation{Target: "demo", Type: "charge", IntentRef: "e-413",
		Payload: map[string]any{"pad": strings.Repeat("x", 70<<10)}})
	check("413", err, ErrBodyTooLarge, 413)

	_, _, err = via(func(r *http.Request) { r.Header.Set("Content-Type", "text/plain") }).Register(ctx, charge("e-415", 1))
	check("415", err, ErrUnsupportedMediaType, 415)

	_, _, err = direct.Register(ctx, Operation{Target: "nowhere", Type: "charge", IntentRef: "e-422", Payload: map[string]any{}})
	check("422", err, ErrInvalid, 422)

	slow := s.client(t)
	slow.token = run(t, "token", "create", "--tenant", "acme", "--name", "one a second", "--rate", "1", "--burst", "1",
		"--database-url", s.DB)
	_, err = slow.Get(ctx, randomUUID())
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("first request of a limited token: %v", err)
	}
	_, err = slow.Get(ctx, randomUUID())
	check("429", err, ErrRateLimited, 429)
	if ae := (*APIError)(nil); errors.As(err, &ae) && ae.RetryAfter < time.Second {
		t.Errorf("429 Retry-After %v", ae.RetryAfter)
	}

	db := s.db(t)
	// 503: one create holds the server's only slot (--max-creates 1)
	// while the database is locked; the other waits a second and is
	// refused.
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	lock := []string{"BEGIN IMMEDIATE"}
	if !strings.HasPrefix(s.DB, "sqlite:") {
		lock = []string{"BEGIN", "LOCK TABLE operation_ledger IN EXCLUSIVE MODE"}
	}
	for _, q := range lock {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	errs := make(chan error, 2)
	for i := range 2 {
		go func() {
			_, _, err := s.client(t, once).Register(ctx, charge(fmt.Sprintf("e-503-%d", i), 1))
			errs <- err
		}()
	}
	first := <-errs
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	second := <-errs
	if second != nil {
		t.Errorf("the create holding the slot: %v", second)
	}
	check("503", first, ErrOverloaded, 503)
	if ae := (*APIError)(nil); errors.As(first, &ae) && ae.RetryAfter < time.Second {
		t.Errorf("503 Retry-After %v", ae.RetryAfter)
	}

	// 500: the ledger's table is gone for a moment.
	if _, err := db.ExecContext(ctx, "ALTER TABLE operation_ledger RENAME TO operation_ledger_gone"); err != nil {
		t.Fatal(err)
	}
	_, err = direct.Get(ctx, randomUUID())
	if _, rerr := db.ExecContext(ctx, "ALTER TABLE operation_ledger_gone RENAME TO operation_ledger"); rerr != nil {
		t.Fatal(rerr)
	}
	check("500", err, ErrInternal, 500)
}

// callbackRecorder receives s's callbacks through a CallbackHandler and
// keeps each delivery, to replay.
type callbackRecorder struct {
	s       *settled
	h       *CallbackHandler
	mu      sync.Mutex
	handled map[string][]Callback // by operation id
	raw     map[string]*http.Request
	bodies  map[string][]byte
}

func newCallbackRecorder(t *testing.T, s *settled) *callbackRecorder {
	r := &callbackRecorder{s: s, handled: map[string][]Callback{}, raw: map[string]*http.Request{}, bodies: map[string][]byte{}}
	r.h = &CallbackHandler{Secrets: [][]byte{s.Secret}, Events: &MemoryEvents{}, Log: slog.New(slog.NewTextHandler(os.Stderr, nil)),
		Handle: func(_ context.Context, cb Callback) error {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.handled[cb.Operation.ID] = append(r.handled[cb.Operation.ID], cb)
			return nil
		}}
	s.Callbacks.set(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(strings.NewReader(string(body)))
		// Only settle's own (first) delivery of an event is kept: the
		// replays below reach this handler too, forged or unsigned ones
		// among them, and must not replace the genuine one.
		r.mu.Lock()
		if id := req.Header.Get(EventIDHeader); r.raw[id] == nil {
			r.raw[id] = req.Clone(context.Background())
			r.bodies[id] = body
		}
		r.mu.Unlock()
		r.h.ServeHTTP(w, req)
	}))
	return r
}

// replay sends a recorded delivery again to the handler, changed by
// edit, and returns the handler's status.
func (r *callbackRecorder) replay(eventID string, edit func(h http.Header, body []byte) []byte) int {
	r.mu.Lock()
	orig, body := r.raw[eventID], r.bodies[eventID]
	r.mu.Unlock()
	h := orig.Header.Clone()
	body = edit(h, append([]byte(nil), body...))
	req, _ := http.NewRequest(http.MethodPost, r.s.Receiver.URL+"/hooks", strings.NewReader(string(body)))
	req.Header = h
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// check waits for settle's callback about op id, then replays it:
// repeated, forged, tampered and stale deliveries are not handled.
func (r *callbackRecorder) check(t *testing.T, id string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var cb Callback
	for {
		r.mu.Lock()
		got := r.handled[id]
		r.mu.Unlock()
		if len(got) > 0 {
			cb = got[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no callback handled for %s within 20s; server log: %s", id, r.s.stderr())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if cb.Event != EventSettled || cb.Operation.State != Succeeded || cb.Operation.RemoteRef == "" ||
		cb.Operation.Tenant != "acme" || cb.Operation.IntentRef != "cb-1" || cb.EventID == "" || cb.SentAt.IsZero() {
		t.Fatalf("callback %+v", cb)
	}
	for name, c := range map[string]struct {
		edit func(h http.Header, body []byte) []byte
		want int
	}{
		"Repeated": {func(_ http.Header, b []byte) []byte { return b }, http.StatusOK},
		"Forged": {func(h http.Header, b []byte) []byte {
			h.Set(SignatureHeader, target.Sign([]byte("scs_forger"), time.Now(), b))
			return b
		}, http.StatusUnauthorized},
		"Tampered": {func(_ http.Header, b []byte) []byte {
			return []byte(strings.Replace(string(b), `"SUCCEEDED"`, `"FAILED_TERMINAL"`, 1))
		}, http.StatusUnauthorized},
		"Stale": {func(h http.Header, b []byte) []byte {
			h.Set(SignatureHeader, target.Sign(r.s.Secret, time.Now().Add(-time.Hour), b))
			h.Set(EventIDHeader, "fresh-id")
			return b
		}, http.StatusUnauthorized},
		"Unsigned": {func(h http.Header, b []byte) []byte { h.Del(SignatureHeader); return b }, http.StatusUnauthorized},
	} {
		if got := r.replay(cb.EventID, c.edit); got != c.want {
			t.Errorf("%s: %d, want %d", name, got, c.want)
		}
	}
	r.mu.Lock()
	n := len(r.handled[id])
	r.mu.Unlock()
	if n != 1 {
		t.Fatalf("the callback was handled %d times", n)
	}
}
