package sim_test

import (
	"errors"
	"net/http"
	"net/url"
	"syscall"
	"testing"
	"time"

	"settle/target/sim"
)

func TestFaults(t *testing.T) {
	for _, tc := range []struct {
		fault       sim.Fault
		wantStatus  int              // when the client gets an answer
		wantErr     func(error) bool // when it must not
		wantObjects int              // what the provider really did
	}{
		{fault: sim.None, wantStatus: http.StatusCreated, wantObjects: 1},
		{fault: sim.FailBeforeCommit, wantStatus: http.StatusServiceUnavailable, wantObjects: 0},
		{fault: sim.FailAfterCommit, wantStatus: http.StatusInternalServerError, wantObjects: 1},
		{fault: sim.Reset, wantErr: isReset, wantObjects: 0},
		{fault: sim.DropAfterCommit, wantErr: func(err error) bool { return err != nil && !isReset(err) }, wantObjects: 1},
		{fault: sim.Slow, wantErr: isTimeout, wantObjects: 1},
		{fault: sim.RateLimited, wantStatus: http.StatusTooManyRequests, wantObjects: 0},
	} {
		t.Run(tc.fault.String(), func(t *testing.T) {
			srv := start(t, sim.Config{Class: "B", SlowDelay: 500 * time.Millisecond})
			srv.Sim().Script(tc.fault)
			r, err := send(plainClient(200*time.Millisecond), http.MethodPost, srv.URL()+"/v1/charges", nil, charge("op", 100))
			switch {
			case tc.wantErr != nil && !tc.wantErr(err):
				t.Errorf("client error = %v (status %d), want the %s failure", err, r.status, tc.fault)
			case tc.wantErr == nil && err != nil:
				t.Errorf("client error = %v, want status %d", err, tc.wantStatus)
			case tc.wantErr == nil && r.status != tc.wantStatus:
				t.Errorf("status = %d, want %d", r.status, tc.wantStatus)
			}
			wantObjects(t, srv, tc.wantObjects)
		})
	}
}

func isReset(err error) bool { return errors.Is(err, syscall.ECONNRESET) }

func isTimeout(err error) bool {
	var ue *url.Error
	return errors.As(err, &ue) && ue.Timeout()
}

func TestScript_PrecedenceAndOrder(t *testing.T) {
	// Every unscripted request fails, so any success below came from the script.
	srv := start(t, sim.Config{Class: "B", FailBeforeCommit: 1})
	srv.Sim().Script(sim.None, sim.FailAfterCommit)
	srv.Sim().Script(sim.DropAfterCommit)

	wantStatus(t, create(t, srv, "", charge("a", 1)), http.StatusCreated)
	wantStatus(t, create(t, srv, "", charge("b", 1)), http.StatusInternalServerError)
	if _, err := send(client, http.MethodPost, srv.URL()+"/v1/charges", nil, charge("c", 1)); err == nil {
		t.Error("third request: want a dropped connection")
	}
	wantStatus(t, create(t, srv, "", charge("d", 1)), http.StatusServiceUnavailable)

	objs := wantObjects(t, srv, 3)
	for i, ref := range []string{"a", "b", "c"} {
		if objs[i].Reference != ref {
			t.Errorf("object %d reference = %q, want %q", i, objs[i].Reference, ref)
		}
	}
	if n := srv.Sim().Requests(); n != 4 {
		t.Errorf("Requests = %d, want 4", n)
	}
}

func TestScript_UnknownFaultPanics(t *testing.T) {
	s, err := sim.New(sim.Config{Class: "A"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	defer func() {
		if recover() == nil {
			t.Error("Script(Fault(99)) did not panic")
		}
	}()
	s.Script(sim.Fault(99))
}

func TestFaults_SeedReproducible(t *testing.T) {
	run := func(seed uint64) []int {
		srv := start(t, sim.Config{Class: "D", Seed: seed, FailBeforeCommit: 0.3, FailAfterCommit: 0.3})
		var statuses []int
		for range 30 {
			statuses = append(statuses, create(t, srv, "", charge("op", 1)).status)
		}
		return statuses
	}
	a, b := run(7), run(7)
	seen := map[int]bool{}
	for i := range a {
		seen[a[i]] = true
		if a[i] != b[i] {
			t.Fatalf("same seed, different faults:\n%v\n%v", a, b)
		}
	}
	if len(seen) != 3 {
		t.Errorf("statuses %v: want a mix of 201, 500 and 503", a)
	}
}

func TestClassA_ReplayAfterLostAnswer(t *testing.T) {
	for _, fault := range []sim.Fault{sim.DropAfterCommit, sim.FailAfterCommit, sim.Slow} {
		t.Run(fault.String(), func(t *testing.T) {
			srv := start(t, sim.Config{Class: "A", SlowDelay: 300 * time.Millisecond})
			srv.Sim().Script(fault)
			h := map[string]string{"Idempotency-Key": "key-1"}
			first, err := send(plainClient(100*time.Millisecond), http.MethodPost, srv.URL()+"/v1/charges", h, charge("op", 100))
			if err == nil && first.status == http.StatusCreated {
				t.Fatalf("%s: the first answer got through", fault)
			}
			// Same key, same body: the provider reveals the object it made,
			// once the slow first request has finished executing.
			r := create(t, srv, "key-1", charge("op", 100))
			wantStatus(t, r, http.StatusCreated)
			if r.header.Get("Idempotent-Replayed") != "true" {
				t.Error("want a replay")
			}
			objs := wantObjects(t, srv, 1)
			if r.fields(t)["id"] != objs[0].ID {
				t.Errorf("replayed id %v, committed %s", r.fields(t)["id"], objs[0].ID)
			}
		})
	}
}

func TestClose_DoesNotWaitForSlow(t *testing.T) {
	srv, err := sim.Start(sim.Config{Class: "B", Slow: 1, SlowDelay: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := send(client, http.MethodPost, srv.URL()+"/v1/charges", nil, charge("op", 1))
		done <- err
	}()
	eventually(t, "the slow object", func() bool { return len(srv.Sim().Objects()) == 1 })
	began := time.Now()
	if err := srv.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if d := time.Since(began); d > time.Second {
		t.Errorf("Close took %s with a slow request in flight", d)
	}
	if err := <-done; err == nil {
		t.Error("the slow request got an answer from a closed server")
	}
}
