package sim_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"settle/target/sim"
)

// wantReplayOf checks that r replays first: same status and body, with
// Idempotent-Replayed: true.
func wantReplayOf(t *testing.T, r, first reply) {
	t.Helper()
	if r.status != first.status || string(r.body) != string(first.body) || r.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("got %d %s (Idempotent-Replayed %q); want a replay of %d %s",
			r.status, r.body, r.header.Get("Idempotent-Replayed"), first.status, first.body)
	}
}

func TestStripe_Replay(t *testing.T) {
	t.Parallel()
	srv := startStripe(t, sim.Config{})
	first := createIntent(t, srv, as{key: "k"}, intent("op", 100, "expand[]=a", "expand[]=b"))
	wantStatus(t, first, http.StatusOK)
	wantReplayOf(t, createIntent(t, srv, as{key: "k"}, intent("op", 100, "expand[]=a", "expand[]=b")), first)

	// Parameters are compared as decoded: the order of different keys does
	// not matter, nor does the spelling of an escape...
	reordered := "metadata[settle_tenant]=acme&currency=EUR&metadata[settle_ref]=op&confirm=true" +
		"&expand[]=a&payment_method=pm_card_visa&expand[]=b&amount=100"
	wantReplayOf(t, createIntent(t, srv, as{key: "k"}, reordered), first)
	escaped := strings.Replace(intent("op", 100, "expand[]=a", "expand[]=b"), "metadata[settle_ref]", "metadata%5Bsettle_ref%5D", 1)
	wantReplayOf(t, createIntent(t, srv, as{key: "k"}, escaped), first)
	// ...but the order of a list does, and so does any value.
	for name, form := range map[string]string{
		"list order":  intent("op", 100, "expand[]=b", "expand[]=a"),
		"amount":      intent("op", 101, "expand[]=a", "expand[]=b"),
		"currency":    strings.Replace(intent("op", 100, "expand[]=a", "expand[]=b"), "EUR", "eur", 1),
		"extra param": intent("op", 100, "expand[]=a", "expand[]=b", "description=x"),
		"invalid":     intent("op", 100, "colour=red"),
	} {
		t.Run(name, func(t *testing.T) {
			e := wantStripeError(t, createIntent(t, srv, as{key: "k"}, form), http.StatusBadRequest, "idempotency_error", "")
			if msg := e["message"].(string); !strings.HasPrefix(msg, "Keys for idempotent requests can only be used with the same parameters they were first used with.") {
				t.Errorf("message %q", msg)
			}
		})
	}
	wantObjects(t, srv, 1)
	if objs := wantObjects(t, srv, 1); objs[0].ID != id(t, first) {
		t.Errorf("object %s; want %s", objs[0].ID, id(t, first))
	}
	// Without a key every request is a new one.
	createIntent(t, srv, as{}, intent("op", 100))
	createIntent(t, srv, as{}, intent("op", 100))
	wantObjects(t, srv, 3)
}

// inFlightIntent starts a create that a scripted Slow fault keeps executing
// and returns once its intent is committed; the channel yields its reply.
func inFlightIntent(t *testing.T, srv *sim.Server, a as, form string) <-chan reply {
	t.Helper()
	srv.Sim().Script(sim.Slow)
	before := len(srv.Sim().Objects())
	ch := make(chan reply, 1)
	go func() {
		r, _ := send(client, http.MethodPost, srv.URL()+"/v1/payment_intents", a.header(), []byte(form))
		ch <- r
	}()
	eventually(t, "the first intent", func() bool { return len(srv.Sim().Objects()) == before+1 })
	return ch
}

func TestStripe_ConcurrentInUse(t *testing.T) {
	t.Parallel()
	srv := startStripe(t, sim.Config{SlowDelay: 300 * time.Millisecond})
	first := inFlightIntent(t, srv, as{key: "k"}, intent("op", 100))
	wantStripeError(t, createIntent(t, srv, as{key: "k"}, intent("op", 100)), http.StatusConflict, "idempotency_error", "idempotency_key_in_use")
	// Different parameters while executing: the mismatch is the answer.
	wantStripeError(t, createIntent(t, srv, as{key: "k"}, intent("op", 999)), http.StatusBadRequest, "idempotency_error", "")
	f := <-first
	wantStatus(t, f, http.StatusOK)
	// The 409 saved nothing: once the first has answered, it is replayed.
	wantReplayOf(t, createIntent(t, srv, as{key: "k"}, intent("op", 100)), f)
	wantObjects(t, srv, 1)
}

func TestStripe_FiftyConcurrentSameKey(t *testing.T) {
	t.Parallel()
	// Latency keeps the first request executing while the rest arrive.
	srv := startStripe(t, sim.Config{Latency: 100 * time.Millisecond})
	var wg sync.WaitGroup
	var mu sync.Mutex
	counts := map[string]int{}
	for range 50 {
		wg.Go(func() {
			r, err := send(client, http.MethodPost, srv.URL()+"/v1/payment_intents", as{key: "same"}.header(), []byte(intent("op", 100)))
			outcome := http.StatusText(r.status)
			if err != nil {
				outcome = err.Error()
			} else if r.header.Get("Idempotent-Replayed") == "true" {
				outcome = "replay"
			}
			mu.Lock()
			counts[outcome]++
			mu.Unlock()
		})
	}
	wg.Wait()
	wantObjects(t, srv, 1)
	if counts["OK"] != 1 || counts["OK"]+counts["Conflict"]+counts["replay"] != 50 || counts["Conflict"] == 0 {
		t.Errorf("outcomes %v: want one OK, some Conflict, the rest replays", counts)
	}
}

// After FailAfterCommit the key holds the 500: a replay cannot resolve the
// operation, and retrieval or search must.
func TestStripe_SavedServerError(t *testing.T) {
	t.Parallel()
	srv := startStripe(t, sim.Config{})
	srv.Sim().Script(sim.FailAfterCommit)
	first := createIntent(t, srv, as{key: "k", account: "acct_a"}, intent("op", 100))
	wantStripeError(t, first, http.StatusInternalServerError, "api_error", "")
	objs := wantObjects(t, srv, 1)
	if objs[0].Status != sim.StatusSucceeded || objs[0].IdempotencyKey != "k" {
		t.Fatalf("object %+v; want the committed intent", objs[0])
	}
	for range 2 {
		wantReplayOf(t, createIntent(t, srv, as{key: "k", account: "acct_a"}, intent("op", 100)), first)
	}
	if ids := searchIDs(t, srv, as{account: "acct_a"}, "metadata['settle_ref']:'op'"); len(ids) != 1 || ids[0] != objs[0].ID {
		t.Errorf("search found %v; want [%s]", ids, objs[0].ID)
	}
	wantStatus(t, getIntent(t, srv, as{account: "acct_a"}, objs[0].ID), http.StatusOK)
	wantObjects(t, srv, 1)
}

func TestStripe_LostAnswerReplayed(t *testing.T) {
	t.Parallel()
	for _, fault := range []sim.Fault{sim.DropAfterCommit, sim.Slow} {
		t.Run(fault.String(), func(t *testing.T) {
			t.Parallel()
			srv := startStripe(t, sim.Config{SlowDelay: 300 * time.Millisecond})
			srv.Sim().Script(fault)
			first, err := send(plainClient(100*time.Millisecond), http.MethodPost, srv.URL()+"/v1/payment_intents",
				as{key: "k"}.header(), []byte(intent("op", 100)))
			if err == nil {
				t.Fatalf("%s: the first answer got through: %d %s", fault, first.status, first.body)
			}
			objs := wantObjects(t, srv, 1)
			var r reply
			eventually(t, "the key's first request to finish", func() bool {
				r = createIntent(t, srv, as{key: "k"}, intent("op", 100))
				return r.status != http.StatusConflict
			})
			wantStatus(t, r, http.StatusOK)
			if r.header.Get("Idempotent-Replayed") != "true" || id(t, r) != objs[0].ID {
				t.Errorf("replay %s (header %q); want the saved 200 for %s", r.body, r.header.Get("Idempotent-Replayed"), objs[0].ID)
			}
			wantObjects(t, srv, 1)
		})
	}
}

// Requests refused before execution begins save nothing: the same key then
// executes as if new.
func TestStripe_NothingSavedBeforeExecution(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		first func(t *testing.T, srv *sim.Server)
	}{
		{"FailBeforeCommit", func(t *testing.T, srv *sim.Server) {
			srv.Sim().Script(sim.FailBeforeCommit)
			wantStripeError(t, createIntent(t, srv, as{key: "k"}, intent("op", 100)), http.StatusServiceUnavailable, "api_error", "")
		}},
		{"Reset", func(t *testing.T, srv *sim.Server) {
			srv.Sim().Script(sim.Reset)
			if _, err := send(client, http.MethodPost, srv.URL()+"/v1/payment_intents", as{key: "k"}.header(), []byte(intent("op", 100))); !isReset(err) {
				t.Fatalf("err = %v; want a reset", err)
			}
		}},
		{"RateLimited", func(t *testing.T, srv *sim.Server) {
			srv.Sim().Script(sim.RateLimited)
			wantStripeError(t, createIntent(t, srv, as{key: "k"}, intent("op", 100)), http.StatusTooManyRequests, "invalid_request_error", "rate_limit")
		}},
		{"validation", func(t *testing.T, srv *sim.Server) {
			wantStripeError(t, createIntent(t, srv, as{key: "k"}, intent("op", 100, "colour=red")), http.StatusBadRequest, "invalid_request_error", "parameter_unknown")
		}},
		{"unauthorised", func(t *testing.T, srv *sim.Server) {
			wantStatus(t, createIntent(t, srv, as{key: "k", auth: "-"}, intent("op", 100)), http.StatusUnauthorized)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := startStripe(t, sim.Config{})
			tc.first(t, srv)
			wantObjects(t, srv, 0)
			// Even different parameters are fine: nothing was saved.
			r := createIntent(t, srv, as{key: "k"}, intent("op", 200))
			wantStatus(t, r, http.StatusOK)
			if r.header.Get("Idempotent-Replayed") != "" {
				t.Error("the key's first executed request is no replay")
			}
			wantObjects(t, srv, 1)
		})
	}
}

func TestStripe_RetentionExpiry(t *testing.T) {
	t.Parallel()
	clock := newClock()
	srv := startStripe(t, sim.Config{Retention: time.Hour, Now: clock.Now})
	first := createIntent(t, srv, as{key: "k"}, intent("op", 100))
	wantStatus(t, first, http.StatusOK)

	clock.Advance(time.Hour - time.Second)
	wantReplayOf(t, createIntent(t, srv, as{key: "k"}, intent("op", 100)), first)
	wantObjects(t, srv, 1)

	// Counted from the key's first use: past it Stripe has pruned the key,
	// and the resend is a second intent.
	clock.Advance(time.Second)
	second := createIntent(t, srv, as{key: "k"}, intent("op", 100))
	wantStatus(t, second, http.StatusOK)
	if second.header.Get("Idempotent-Replayed") != "" || id(t, second) == id(t, first) {
		t.Fatalf("after retention: %s; want a new intent", second.body)
	}
	wantObjects(t, srv, 2)
	// The new use starts a new window.
	wantReplayOf(t, createIntent(t, srv, as{key: "k"}, intent("op", 100)), second)
}

func TestStripe_DefaultRetention(t *testing.T) {
	t.Parallel()
	clock := newClock()
	srv := startStripe(t, sim.Config{Now: clock.Now})
	first := createIntent(t, srv, as{key: "k"}, intent("op", 100))
	clock.Advance(24*time.Hour - time.Second)
	wantReplayOf(t, createIntent(t, srv, as{key: "k"}, intent("op", 100)), first)
	clock.Advance(time.Second)
	wantStatus(t, createIntent(t, srv, as{key: "k"}, intent("op", 100)), http.StatusOK)
	wantObjects(t, srv, 2)
}
