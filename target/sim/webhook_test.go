package sim_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"settle/target/sim"
)

const secret = "whsec_test"

// delivery is one webhook request as the receiver saw it.
type delivery struct {
	signature string
	body      []byte
}

// receiver records deliveries; fail decides, per attempt number (1-based),
// whether to answer 500 instead of 204.
type receiver struct {
	mu       sync.Mutex
	got      []delivery
	attempts int
	fail     func(attempt int) bool
}

func newReceiver(t *testing.T, fail func(int) bool) (*receiver, string) {
	rc := &receiver{fail: fail}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		rc.attempts++
		if rc.fail != nil && rc.fail(rc.attempts) {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		rc.got = append(rc.got, delivery{r.Header.Get(sim.SignatureHeader), body})
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(ts.Close)
	return rc, ts.URL
}

func (rc *receiver) deliveries() []delivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]delivery(nil), rc.got...)
}

func (rc *receiver) waitFor(t *testing.T, n int) []delivery {
	t.Helper()
	eventually(t, strconv.Itoa(n)+" deliveries", func() bool { return len(rc.deliveries()) >= n })
	return rc.deliveries()
}

type testEvent struct {
	ID   string         `json:"id"`
	Type string         `json:"type"`
	Data map[string]any `json:"data"`
}

// verify checks a delivery's signature the way a receiver must: recompute
// Sign for the header's t and compare.
func verify(t *testing.T, d delivery) testEvent {
	t.Helper()
	ts, _, ok := strings.Cut(strings.TrimPrefix(d.signature, "t="), ",")
	unix, err := strconv.ParseInt(ts, 10, 64)
	if !ok || err != nil {
		t.Fatalf("malformed signature %q", d.signature)
	}
	if want := sim.Sign([]byte(secret), time.Unix(unix, 0), d.body); d.signature != want {
		t.Fatalf("signature %q, want %q", d.signature, want)
	}
	if sim.Sign([]byte("other"), time.Unix(unix, 0), d.body) == d.signature {
		t.Fatal("signature does not depend on the secret")
	}
	var ev testEvent
	if err := json.Unmarshal(d.body, &ev); err != nil {
		t.Fatalf("decode event %s: %v", d.body, err)
	}
	return ev
}

func TestWebhook_SignedEvent(t *testing.T) {
	rc, url := newReceiver(t, nil)
	clock := newClock()
	srv := start(t, sim.Config{Class: "B", WebhookURL: url, WebhookSecret: secret, Now: clock.Now})
	id := create(t, srv, "", charge("op", 100)).fields(t)["id"]

	d := rc.waitFor(t, 1)[0]
	ev := verify(t, d)
	if !strings.HasPrefix(ev.ID, "evt_") || ev.Type != "charge.succeeded" || ev.Data["id"] != id || ev.Data["status"] != "succeeded" {
		t.Errorf("event = %+v, want charge.succeeded for %v", ev, id)
	}
	if want := "t=" + strconv.FormatInt(clock.Now().Unix(), 10) + ","; !strings.HasPrefix(d.signature, want) {
		t.Errorf("signature %q, want t from the injected clock", d.signature)
	}
	if _, ok := ev.Data["idempotency_key"]; ok {
		t.Error("events must not carry the idempotency key")
	}
}

func TestWebhook_Duplicates(t *testing.T) {
	rc, url := newReceiver(t, nil)
	srv := start(t, sim.Config{Class: "B", WebhookURL: url, WebhookSecret: secret, WebhookDuplicates: 1})
	create(t, srv, "", charge("op", 100))
	rc.waitFor(t, 2)
	time.Sleep(100 * time.Millisecond) // a third delivery would be a bug
	if got := rc.deliveries(); len(got) != 2 || string(got[0].body) != string(got[1].body) {
		t.Fatalf("deliveries = %d, want 2 identical ones", len(got))
	}
	if got := rc.deliveries(); verify(t, got[0]).ID != verify(t, got[1]).ID {
		t.Error("a duplicate must carry the same event id")
	}
}

func TestWebhook_RetriesOnError(t *testing.T) {
	rc, url := newReceiver(t, func(attempt int) bool { return attempt <= 2 })
	srv := start(t, sim.Config{Class: "B", WebhookURL: url, WebhookSecret: secret})
	create(t, srv, "", charge("op", 100))
	verify(t, rc.waitFor(t, 1)[0])
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.attempts != 3 {
		t.Errorf("attempts = %d, want 3 (two 500s, then success)", rc.attempts)
	}
}

func TestWebhook_AsyncCompletion(t *testing.T) {
	rc, url := newReceiver(t, nil)
	srv := start(t, sim.Config{Class: "B", Async: true, AsyncDelay: 100 * time.Millisecond, WebhookURL: url, WebhookSecret: secret})
	r := create(t, srv, "", charge("op", 100))
	wantStatus(t, r, http.StatusAccepted)
	if len(rc.deliveries()) != 0 {
		t.Error("no event before the charge succeeds")
	}
	ev := verify(t, rc.waitFor(t, 1)[0])
	if ev.Data["id"] != r.fields(t)["id"] || ev.Data["status"] != "succeeded" {
		t.Errorf("event data = %v", ev.Data)
	}
}

func TestWebhook_Reorder(t *testing.T) {
	rc, url := newReceiver(t, nil)
	srv := start(t, sim.Config{Class: "D", WebhookURL: url, WebhookSecret: secret, WebhookReorder: true, Seed: 1})
	const n = 12
	for i := range n {
		create(t, srv, "", charge("op"+strconv.Itoa(i), 100))
	}
	got := rc.waitFor(t, n)
	inOrder := true
	for i, d := range got {
		if verify(t, d).Data["reference"] != "op"+strconv.Itoa(i) {
			inOrder = false
		}
	}
	if inOrder {
		t.Error("with WebhookReorder, events arrived exactly in creation order")
	}
}

func TestWebhook_CloseStopsRetries(t *testing.T) {
	rc, url := newReceiver(t, func(int) bool { return true })
	srv, err := sim.Start(sim.Config{Class: "B", WebhookURL: url, WebhookSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	create(t, srv, "", charge("op", 100))
	eventually(t, "a first attempt", func() bool { rc.mu.Lock(); defer rc.mu.Unlock(); return rc.attempts > 0 })
	began := time.Now()
	_ = srv.Close()
	if d := time.Since(began); d > 500*time.Millisecond {
		t.Errorf("Close took %s while a delivery was backing off", d)
	}
}
