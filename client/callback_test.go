package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"settle/target"
)

// VerifyCallback accepts what settle's own signer (target.Sign, which
// deliver.Post uses) produces, and refuses everything else.
func TestVerifyCallback(t *testing.T) {
	t.Parallel()
	secret, body := []byte("scs_secret"), []byte(`{"event":"operation.settled"}`)
	now := time.Now()
	for name, c := range map[string]struct {
		header string
		body   []byte
		want   error
	}{
		"Genuine":        {target.Sign(secret, now, body), body, nil},
		"WithinSkew":     {target.Sign(secret, now.Add(4*time.Minute), body), body, nil},
		"OtherSecret":    {target.Sign([]byte("scs_other"), now, body), body, ErrSignatureInvalid},
		"TamperedBody":   {target.Sign(secret, now, body), []byte(`{"event":"operation.settled" }`), ErrSignatureInvalid},
		"Stale":          {target.Sign(secret, now.Add(-6*time.Minute), body), body, ErrSignatureExpired},
		"Future":         {target.Sign(secret, now.Add(6*time.Minute), body), body, ErrSignatureExpired},
		"Empty":          {"", body, ErrSignatureMissing},
		"NoTime":         {"v1=" + strings.Repeat("00", 32), body, ErrSignatureMissing},
		"NoSignature":    {"t=1", body, ErrSignatureMissing},
		"ShortSignature": {"t=1,v1=00", body, ErrSignatureMissing},
		"SecondMatches": {"t=" + strings.TrimPrefix(strings.Split(target.Sign(secret, now, body), ",")[0], "t=") +
			",v1=" + strings.Repeat("ab", 32) + "," + strings.Split(target.Sign(secret, now, body), ",")[1], body, nil},
	} {
		t.Run(name, func(t *testing.T) {
			if err := verifyAt(secret, c.header, c.body, 5*time.Minute, now); !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
		})
	}
	if err := verifyAt(nil, target.Sign(nil, now, body), body, time.Minute, now); !errors.Is(err, ErrSignatureMissing) {
		t.Fatalf("an empty secret verified: %v", err)
	}
}

// The handler's answers, each against the store's state.
func TestCallbackHandler(t *testing.T) {
	t.Parallel()
	secret := []byte("scs_current")
	var handled atomic.Int32
	fail := atomic.Bool{}
	h := &CallbackHandler{Secrets: [][]byte{[]byte("scs_previous"), secret}, Events: &MemoryEvents{},
		Handle: func(_ context.Context, cb Callback) error {
			if cb.Operation.ID != "op-1" || cb.Operation.State != Succeeded || cb.EventID == "" {
				t.Errorf("callback %+v", cb)
			}
			if fail.Load() {
				return errors.New("not now")
			}
			handled.Add(1)
			return nil
		}}
	settled := `{"event":"operation.settled","sent_at":"2030-01-01T00:00:00Z","operation":{"operation_id":"op-1","state":"SUCCEEDED"}}`
	post := func(id, body, sig string) int {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		r.Header.Set(EventIDHeader, id)
		r.Header.Set(SignatureHeader, sig)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	sign := func(body string) string { return target.Sign(secret, time.Now(), []byte(body)) }
	for _, c := range []struct {
		name, id, body, sig string
		fail                bool
		want                int
		handled             int32
	}{
		{"Forged", "1", settled, target.Sign([]byte("scs_forger"), time.Now(), []byte(settled)), false, 401, 0},
		{"Stale", "1", settled, target.Sign(secret, time.Now().Add(-time.Hour), []byte(settled)), false, 401, 0},
		{"HandleFails", "1", settled, sign(settled), true, 500, 0},
		{"RetryAfterFailure", "1", settled, sign(settled), false, 200, 1},
		{"Repeated", "1", settled, sign(settled), false, 200, 1},
		{"PreviousSecret", "2", settled, target.Sign([]byte("scs_previous"), time.Now(), []byte(settled)), false, 200, 2},
		{"NoEventID", "", settled, sign(settled), false, 400, 2},
		{"NotACallback", "3", `[1]`, sign(`[1]`), false, 400, 2},
		{"Test", "test-ab", `{"event":"callback.test","tenant":"acme"}`, sign(`{"event":"callback.test","tenant":"acme"}`), false, 200, 2},
	} {
		fail.Store(c.fail)
		if got := post(c.id, c.body, c.sig); got != c.want || handled.Load() != c.handled {
			t.Fatalf("%s: status %d, handled %d; want %d, %d", c.name, got, handled.Load(), c.want, c.handled)
		}
	}
	// A delivery while another of the same event is being processed is
	// told to come back.
	if st, _ := h.Events.Begin(context.Background(), "9"); st != EventNew {
		t.Fatal(st)
	}
	if got := post("9", settled, sign(settled)); got != http.StatusConflict {
		t.Fatalf("in progress: %d", got)
	}
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusMethodNotAllowed {
		t.Fatalf("GET: %d", w.Code)
	}
}

func TestMemoryEvents_Expiry(t *testing.T) {
	t.Parallel()
	now := time.Now()
	m := &MemoryEvents{Keep: time.Hour, now: func() time.Time { return now }}
	ctx := context.Background()
	m.Begin(ctx, "a")
	m.Finish(ctx, "a", true)
	m.Begin(ctx, "b") // in progress, its process died
	now = now.Add(11 * time.Minute)
	if st, _ := m.Begin(ctx, "a"); st != EventDone {
		t.Fatalf("a processed id forgotten early: %v", st)
	}
	if st, _ := m.Begin(ctx, "b"); st != EventNew {
		t.Fatalf("an abandoned claim kept: %v", st)
	}
	now = now.Add(2 * time.Hour)
	if st, _ := m.Begin(ctx, "a"); st != EventNew {
		t.Fatalf("a processed id kept past Keep: %v", st)
	}
}
