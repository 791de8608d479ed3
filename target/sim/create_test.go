package sim_test

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"settle/target/sim"
)

func TestCreate_Object(t *testing.T) {
	clock := newClock()
	srv := start(t, sim.Config{Class: "B", Now: clock.Now})
	body := []byte(`{"amount": 1250, "currency": "EUR", "description": "order 7",
		"metadata": {"settle_ref": "op_1", "settle_tenant": "acme", "note": 1}}`)
	r := create(t, srv, "k1", body)
	wantStatus(t, r, http.StatusCreated)

	got := r.fields(t)
	sum := sha256.Sum256(body)
	for field, want := range map[string]any{
		"reference": "op_1", "tenant": "acme", "amount": 1250.0, "currency": "EUR",
		"status": "succeeded", "created": float64(clock.Now().Unix()), "description": "order 7",
		"payload_sha256": hex.EncodeToString(sum[:]),
	} {
		if got[field] != want {
			t.Errorf("%s = %v, want %v", field, got[field], want)
		}
	}
	if id, _ := got["id"].(string); !strings.HasPrefix(id, "ch_") {
		t.Errorf("id = %q, want ch_ prefix", id)
	}
	if md, _ := got["metadata"].(map[string]any); md["note"] != 1.0 {
		t.Errorf("metadata = %v, want the request's metadata", got["metadata"])
	}
	if _, ok := got["idempotency_key"]; ok {
		t.Error("the provider API must not echo the idempotency key")
	}
	objs := wantObjects(t, srv, 1)
	if objs[0].IdempotencyKey != "k1" || objs[0].ID != got["id"] {
		t.Errorf("/_sim/objects = %+v, want key k1 and id %v", objs[0], got["id"])
	}
	if n := srv.Sim().Requests(); n != 1 {
		t.Errorf("Requests = %d, want 1", n)
	}
}

func TestCreate_InvalidBody(t *testing.T) {
	srv := start(t, sim.Config{Class: "D"})
	// A 400 must not consume the scripted fault meant for the next create.
	srv.Sim().Script(sim.FailBeforeCommit)
	for _, tc := range []struct{ name, body string }{
		{"not json", `amount=1`},
		{"array", `[1]`},
		{"null", `null`},
		{"missing amount", `{"currency":"eur","metadata":{"settle_ref":"r","settle_tenant":"t"}}`},
		{"zero amount", `{"amount":0,"currency":"eur","metadata":{"settle_ref":"r","settle_tenant":"t"}}`},
		{"fractional amount", `{"amount":1.5,"currency":"eur","metadata":{"settle_ref":"r","settle_tenant":"t"}}`},
		{"bad currency", `{"amount":1,"currency":"euro","metadata":{"settle_ref":"r","settle_tenant":"t"}}`},
		{"missing reference", `{"amount":1,"currency":"eur","metadata":{"settle_tenant":"t"}}`},
		{"empty reference", `{"amount":1,"currency":"eur","metadata":{"settle_ref":"","settle_tenant":"t"}}`},
		{"missing tenant", `{"amount":1,"currency":"eur","metadata":{"settle_ref":"r"}}`},
		{"metadata not object", `{"amount":1,"currency":"eur","metadata":"x"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := create(t, srv, "", []byte(tc.body))
			wantStatus(t, r, http.StatusBadRequest)
			if code := r.errorCode(t); code != "invalid_request" {
				t.Errorf("error = %q", code)
			}
		})
	}
	wantObjects(t, srv, 0)
	wantStatus(t, create(t, srv, "", charge("r", 1)), http.StatusServiceUnavailable)
}

func TestCreate_CustomFields(t *testing.T) {
	srv := start(t, sim.Config{Class: "D", ReferenceField: "client_reference", TenantField: "account.tenant"})
	r := create(t, srv, "", []byte(`{"amount":5,"currency":"usd","client_reference":"ref-9","account":{"tenant":"t2"}}`))
	wantStatus(t, r, http.StatusCreated)
	if got := r.fields(t); got["reference"] != "ref-9" || got["tenant"] != "t2" {
		t.Errorf("reference, tenant = %v, %v", got["reference"], got["tenant"])
	}
	wantStatus(t, create(t, srv, "", charge("r", 1)), http.StatusBadRequest) // metadata.settle_ref is not the field now
}

func TestClassA_Replay(t *testing.T) {
	srv := start(t, sim.Config{Class: "A"})
	first := create(t, srv, "key-1", charge("op", 100))
	wantStatus(t, first, http.StatusCreated)
	again := create(t, srv, "key-1", charge("op", 100))
	wantStatus(t, again, http.StatusCreated)
	if string(again.body) != string(first.body) {
		t.Errorf("replay body %s, want original %s", again.body, first.body)
	}
	if again.header.Get("Idempotent-Replayed") != "true" || first.header.Get("Idempotent-Replayed") != "" {
		t.Error("only the replay must carry Idempotent-Replayed: true")
	}
	wantObjects(t, srv, 1)
}

func TestClassA_Mismatch(t *testing.T) {
	for _, tc := range []struct {
		name       string
		configured int
		want       int
	}{{"default", 0, http.StatusUnprocessableEntity}, {"configured", http.StatusBadRequest, http.StatusBadRequest}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := start(t, sim.Config{Class: "A", MismatchStatus: tc.configured})
			wantStatus(t, create(t, srv, "key-1", charge("op", 100)), http.StatusCreated)
			r := create(t, srv, "key-1", charge("op", 101))
			wantStatus(t, r, tc.want)
			if code := r.errorCode(t); code != "idempotency_key_mismatch" {
				t.Errorf("error = %q", code)
			}
			wantObjects(t, srv, 1)
		})
	}
}

// inFlight starts a create that a scripted Slow fault keeps executing, and
// returns once its object is committed; the returned channel yields its reply.
func inFlight(t *testing.T, srv *sim.Server, key string, body []byte) <-chan reply {
	t.Helper()
	srv.Sim().Script(sim.Slow)
	ch := make(chan reply, 1)
	go func() {
		r, _ := send(client, http.MethodPost, srv.URL()+"/v1/charges", map[string]string{"Idempotency-Key": key}, body)
		ch <- r
	}()
	eventually(t, "the first object", func() bool { return len(srv.Sim().Objects()) == 1 })
	return ch
}

func TestClassA_ConcurrentInUse(t *testing.T) {
	srv := start(t, sim.Config{Class: "A", ConflictOnConcurrent: true, SlowDelay: 300 * time.Millisecond})
	first := inFlight(t, srv, "key-1", charge("op", 100))
	r := create(t, srv, "key-1", charge("op", 100))
	wantStatus(t, r, http.StatusConflict)
	if code := r.errorCode(t); code != "idempotency_key_in_use" {
		t.Errorf("error = %q", code)
	}
	wantStatus(t, <-first, http.StatusCreated)
	// Once the first has answered, the same request is a replay.
	if r := create(t, srv, "key-1", charge("op", 100)); r.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("after the first answered: status %d, want a replay", r.status)
	}
	wantObjects(t, srv, 1)
}

func TestClassA_ConcurrentWaits(t *testing.T) {
	srv := start(t, sim.Config{Class: "A", SlowDelay: 200 * time.Millisecond})
	first := inFlight(t, srv, "key-1", charge("op", 100))
	began := time.Now()
	r := create(t, srv, "key-1", charge("op", 100))
	wantStatus(t, r, http.StatusCreated)
	if r.header.Get("Idempotent-Replayed") != "true" || time.Since(began) < 50*time.Millisecond {
		t.Errorf("the second request must wait for the first and replay it")
	}
	if f := <-first; string(f.body) != string(r.body) {
		t.Errorf("replay %s differs from original %s", r.body, f.body)
	}
	wantObjects(t, srv, 1)
}

func TestClassA_AfterRetentionNewObject(t *testing.T) {
	clock := newClock()
	srv := start(t, sim.Config{Class: "A", Retention: time.Hour, Now: clock.Now})
	first := create(t, srv, "key-1", charge("op", 100))
	wantStatus(t, first, http.StatusCreated)

	clock.Advance(time.Hour - time.Second)
	if r := create(t, srv, "key-1", charge("op", 100)); r.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("inside the window: status %d, want a replay", r.status)
	}
	wantObjects(t, srv, 1)

	// The window counts from the key's first use, not its last; past it the
	// provider has forgotten the key and the resend is a second charge.
	clock.Advance(time.Second)
	second := create(t, srv, "key-1", charge("op", 100))
	wantStatus(t, second, http.StatusCreated)
	if second.header.Get("Idempotent-Replayed") != "" || second.fields(t)["id"] == first.fields(t)["id"] {
		t.Fatal("after the window the same key must create a new object")
	}
	wantObjects(t, srv, 2)
}

func TestClassesBCD_IgnoreKey(t *testing.T) {
	for _, class := range []string{"B", "C", "D"} {
		t.Run(class, func(t *testing.T) {
			srv := start(t, sim.Config{Class: class})
			for range 2 {
				r := create(t, srv, "key-1", charge("op", 100))
				wantStatus(t, r, http.StatusCreated)
				if r.header.Get("Idempotent-Replayed") != "" {
					t.Error("no replay outside class A")
				}
			}
			wantStatus(t, create(t, srv, "key-1", charge("op", 999)), http.StatusCreated) // no mismatch check
			for _, o := range wantObjects(t, srv, 3) {
				if o.IdempotencyKey != "key-1" {
					t.Errorf("recorded key %q, want key-1", o.IdempotencyKey)
				}
			}
		})
	}
}

func TestClassA_FiftyConcurrentSameKey(t *testing.T) {
	for _, conflict := range []bool{true, false} {
		name := map[bool]string{true: "ConflictOnConcurrent", false: "WaitAndReplay"}[conflict]
		t.Run(name, func(t *testing.T) {
			// Latency keeps the first request executing while the rest arrive.
			srv := start(t, sim.Config{Class: "A", ConflictOnConcurrent: conflict, Latency: 100 * time.Millisecond})
			var wg sync.WaitGroup
			var mu sync.Mutex
			counts := map[string]int{}
			for range 50 {
				wg.Go(func() {
					// Not create: t.Fatal may not be called off the test goroutine.
					r, err := send(client, http.MethodPost, srv.URL()+"/v1/charges",
						map[string]string{"Idempotency-Key": "same-key"}, charge("op", 100))
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
			if counts["Created"] != 1 || counts["Created"]+counts["Conflict"]+counts["replay"] != 50 {
				t.Errorf("outcomes %v: want one Created and the rest Conflict or replay", counts)
			}
			if !conflict && counts["replay"] != 49 {
				t.Errorf("outcomes %v: want 49 replays", counts)
			}
			if srv.Sim().Requests() != 50 {
				t.Errorf("Requests = %d, want 50", srv.Sim().Requests())
			}
		})
	}
}
