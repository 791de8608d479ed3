package sim_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"settle/target/sim"
)

// lookup returns the ids GET /v1/charges?reference=ref lists.
func lookup(t *testing.T, srv *sim.Server, ref string) []string {
	t.Helper()
	r := mustSend(t, http.MethodGet, srv.URL()+"/v1/charges?reference="+ref, nil, nil)
	wantStatus(t, r, http.StatusOK)
	var list struct {
		Data []sim.Object `json:"data"`
	}
	if err := json.Unmarshal(r.body, &list); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
	ids := []string{}
	for _, o := range list.Data {
		if o.Reference != ref {
			t.Errorf("lookup for %q listed reference %q", ref, o.Reference)
		}
		ids = append(ids, o.ID)
	}
	return ids
}

func getCharge(t *testing.T, srv *sim.Server, id string) reply {
	t.Helper()
	return mustSend(t, http.MethodGet, srv.URL()+"/v1/charges/"+id, nil, nil)
}

func TestLookup_Lag(t *testing.T) {
	clock := newClock()
	srv := start(t, sim.Config{Class: "B", LookupLag: 10 * time.Second, Now: clock.Now})
	id := create(t, srv, "", charge("op", 100)).fields(t)["id"].(string)
	create(t, srv, "", charge("other", 100))

	// Committed but not yet visible: exactly the "not found" that must not
	// be read as "never happened".
	if ids := lookup(t, srv, "op"); len(ids) != 0 {
		t.Errorf("lookup inside the lag = %v, want none", ids)
	}
	wantStatus(t, getCharge(t, srv, id), http.StatusNotFound)
	wantObjects(t, srv, 2)

	clock.Advance(10 * time.Second)
	if ids := lookup(t, srv, "op"); len(ids) != 1 || ids[0] != id {
		t.Errorf("lookup after the lag = %v, want [%s]", ids, id)
	}
	wantStatus(t, getCharge(t, srv, id), http.StatusOK)
}

func TestSetLookupLag(t *testing.T) {
	clock := newClock()
	srv := start(t, sim.Config{Class: "A", Now: clock.Now})
	create(t, srv, "", charge("op", 100))
	if len(lookup(t, srv, "op")) != 1 {
		t.Fatal("with no lag the object is visible at once")
	}
	srv.Sim().SetLookupLag(time.Minute)
	if len(lookup(t, srv, "op")) != 0 {
		t.Fatal("a new lag applies to existing objects")
	}
	clock.Advance(time.Minute)
	if len(lookup(t, srv, "op")) != 1 {
		t.Fatal("visible once the new lag has passed")
	}
}

func TestLookup_BadRequests(t *testing.T) {
	srv := start(t, sim.Config{Class: "B"})
	wantStatus(t, mustSend(t, http.MethodGet, srv.URL()+"/v1/charges", nil, nil), http.StatusBadRequest)
	r := getCharge(t, srv, "ch_unknown")
	wantStatus(t, r, http.StatusNotFound)
	if code := r.errorCode(t); code != "not_found" {
		t.Errorf("error = %q", code)
	}
}

func TestLookup_ClassDNotSupported(t *testing.T) {
	srv := start(t, sim.Config{Class: "D"})
	id := create(t, srv, "", charge("op", 100)).fields(t)["id"].(string)
	for _, path := range []string{"/v1/charges?reference=op", "/v1/charges/" + id} {
		r := mustSend(t, http.MethodGet, srv.URL()+path, nil, nil)
		wantStatus(t, r, http.StatusNotFound)
		if code := r.errorCode(t); code != "lookup_not_supported" {
			t.Errorf("GET %s error = %q", path, code)
		}
	}
}

func TestGet_ETag(t *testing.T) {
	srv := start(t, sim.Config{Class: "B"})
	created := create(t, srv, "", charge("op", 100)).fields(t)
	r := getCharge(t, srv, created["id"].(string))
	wantStatus(t, r, http.StatusOK)
	if got := r.header.Get("ETag"); got != `"1"` {
		t.Errorf("ETag = %q, want \"1\"", got)
	}
	if got := r.fields(t); got["id"] != created["id"] || got["reference"] != "op" {
		t.Errorf("GET = %v", got)
	}
}

func TestUpdate_IfMatch(t *testing.T) {
	srv := start(t, sim.Config{Class: "C"})
	id := create(t, srv, "", charge("op", 100)).fields(t)["id"].(string)
	url := srv.URL() + "/v1/charges/" + id
	desc := []byte(`{"description":"updated"}`)

	r := mustSend(t, http.MethodPost, url, nil, desc)
	wantStatus(t, r, http.StatusPreconditionRequired)

	r = mustSend(t, http.MethodPost, url, map[string]string{"If-Match": `"7"`}, desc)
	wantStatus(t, r, http.StatusPreconditionFailed)
	if code := r.errorCode(t); code != "precondition_failed" {
		t.Errorf("error = %q", code)
	}

	r = mustSend(t, http.MethodPost, url, map[string]string{"If-Match": `"1"`}, desc)
	wantStatus(t, r, http.StatusOK)
	if r.header.Get("ETag") != `"2"` || r.fields(t)["description"] != "updated" {
		t.Errorf("update: ETag %q, body %s", r.header.Get("ETag"), r.body)
	}
	// The stale version now fails safely: the point of class C.
	wantStatus(t, mustSend(t, http.MethodPost, url, map[string]string{"If-Match": `"1"`}, desc), http.StatusPreconditionFailed)
	// Amount is fixed once the charge has succeeded.
	wantStatus(t, mustSend(t, http.MethodPost, url, map[string]string{"If-Match": `"2"`}, []byte(`{"amount":5}`)), http.StatusBadRequest)
	wantStatus(t, mustSend(t, http.MethodPost, srv.URL()+"/v1/charges/ch_nope", map[string]string{"If-Match": "*"}, desc), http.StatusNotFound)
	if v := srv.Sim().Objects()[0].Version; v != 2 {
		t.Errorf("version = %d, want 2", v)
	}
}

func TestUpdate_OtherClasses(t *testing.T) {
	for _, class := range []string{"A", "B", "D"} {
		t.Run(class, func(t *testing.T) {
			srv := start(t, sim.Config{Class: class})
			id := create(t, srv, "", charge("op", 100)).fields(t)["id"].(string)
			r := mustSend(t, http.MethodPost, srv.URL()+"/v1/charges/"+id, map[string]string{"If-Match": `"1"`}, []byte(`{"description":"x"}`))
			wantStatus(t, r, http.StatusMethodNotAllowed)
		})
	}
}

func TestAsync(t *testing.T) {
	srv := start(t, sim.Config{Class: "C", Async: true, AsyncDelay: 150 * time.Millisecond})
	r := create(t, srv, "", charge("op", 100))
	wantStatus(t, r, http.StatusAccepted)
	got := r.fields(t)
	if got["status"] != "pending" || len(got) != 2 {
		t.Fatalf("202 body = %s, want only id and status pending", r.body)
	}
	id := got["id"].(string)
	if s := getCharge(t, srv, id).fields(t)["status"]; s != "pending" {
		t.Fatalf("status right after 202 = %v, want pending", s)
	}
	// A pending charge's amount may still change under If-Match.
	wantStatus(t, mustSend(t, http.MethodPost, srv.URL()+"/v1/charges/"+id, map[string]string{"If-Match": `"1"`}, []byte(`{"amount":90}`)), http.StatusOK)

	eventually(t, "completion", func() bool { return getCharge(t, srv, id).fields(t)["status"] == "succeeded" })
	final := getCharge(t, srv, id)
	if final.header.Get("ETag") != `"3"` || final.fields(t)["amount"] != 90.0 {
		t.Errorf("completed: ETag %q body %s, want version 3 and amount 90", final.header.Get("ETag"), final.body)
	}
	wantObjects(t, srv, 1)
}

func TestDuplicate(t *testing.T) {
	srv := start(t, sim.Config{Class: "B"})
	orig := create(t, srv, "k", charge("op", 100)).fields(t)

	dup, err := srv.Sim().Duplicate("op")
	if err != nil {
		t.Fatal(err)
	}
	if dup.ID == orig["id"] || dup.Reference != "op" || dup.PayloadSHA256 != orig["payload_sha256"] {
		t.Errorf("duplicate = %+v, want a new id carrying the original's reference and payload", dup)
	}
	r := mustSend(t, http.MethodPost, srv.URL()+"/_sim/duplicate?reference=op", nil, nil)
	wantStatus(t, r, http.StatusCreated)
	if len(lookup(t, srv, "op")) != 3 {
		t.Error("lookup must list the original and both duplicates")
	}
	wantObjects(t, srv, 3)

	if _, err := srv.Sim().Duplicate("nope"); !errors.Is(err, sim.ErrNotFound) {
		t.Errorf("Duplicate(unknown) error = %v, want ErrNotFound", err)
	}
	wantStatus(t, mustSend(t, http.MethodPost, srv.URL()+"/_sim/duplicate?reference=nope", nil, nil), http.StatusNotFound)
	if srv.Sim().Requests() != 1 {
		t.Error("duplicates are not create requests")
	}
}
