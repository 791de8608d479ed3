package web_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"settle/ledger"
	"settle/web"
)

// failingStore is a ledger whose database has gone away under a running
// server: every read and write fails with an internal error.
type failingStore struct{ store }

var errDatabaseGone = errors.New("database connection lost")

func (failingStore) Create(context.Context, ledger.NewOperation) (ledger.Operation, bool, error) {
	return ledger.Operation{}, false, errDatabaseGone
}
func (failingStore) Get(context.Context, string, string) (ledger.Operation, error) {
	return ledger.Operation{}, errDatabaseGone
}
func (failingStore) Summary(context.Context, string, string) (ledger.Operation, error) {
	return ledger.Operation{}, errDatabaseGone
}
func (failingStore) List(context.Context, ledger.ListFilter) (ledger.Page, error) {
	return ledger.Page{}, errDatabaseGone
}

// unreachableStore is a ledger with no primary to reach (a failover in
// progress): every read and write fails as a refused connection does.
type unreachableStore struct{ store }

var errNoPrimary = fmt.Errorf("failed to connect: %w", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED})

func (unreachableStore) Create(context.Context, ledger.NewOperation) (ledger.Operation, bool, error) {
	return ledger.Operation{}, false, errNoPrimary
}
func (unreachableStore) Get(context.Context, string, string) (ledger.Operation, error) {
	return ledger.Operation{}, errNoPrimary
}
func (unreachableStore) Summary(context.Context, string, string) (ledger.Operation, error) {
	return ledger.Operation{}, errNoPrimary
}
func (unreachableStore) List(context.Context, ledger.ListFilter) (ledger.Page, error) {
	return ledger.Page{}, errNoPrimary
}

// Every documented operation is driven to every documented status over
// loopback HTTP, on both stores, and each exchange is checked against the
// document the server serves (env's client does that). The test ends by
// asking the document which responses it never saw.
func TestOpenAPI_Conformance(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		s := open(t)
		e := serve(t, s, web.Config{Limits: web.Limits{BodyLimit: 4096}})
		// A second server over the same tokens whose ledger fails; its
		// exchanges count towards the same document's coverage.
		down := serve(t, s, web.Config{Store: failingStore{s}})
		down.api, down.client, down.token = e.api, e.client, e.token
		// And one whose database has no primary: 503 with Retry-After.
		away := serve(t, s, web.Config{Store: unreachableStore{s}})
		away.api, away.client, away.token = e.api, e.client, e.token
		wantAway := func(r response) {
			t.Helper()
			wantError(t, r, http.StatusServiceUnavailable, "unavailable")
			if r.header.Get("Retry-After") == "" {
				t.Fatalf("503 unavailable without Retry-After: %s", r.body)
			}
		}

		globex := "Bearer " + e.newToken("globex")
		revoked := e.newToken("acme")
		if err := s.RevokeToken(adminCtx, "acme", tokenID(t, s, revoked), time.Now()); err != nil {
			t.Fatal(err)
		}
		want := func(r response, status int, code string) {
			t.Helper()
			if code == "" && r.status != status {
				t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
			}
			if code != "" {
				wantError(t, r, status, code)
			}
		}
		unauthorized := map[string]string{
			"Missing":   "",
			"NotBearer": "Basic YWxhZGRpbjpvcGVuc2VzYW1l",
			"Malformed": "Bearer nonsense",
			"Unknown":   "Bearer stl_" + strings.Repeat("A", 43),
			"Revoked":   "Bearer " + revoked,
		}

		// createOperation
		created := e.post(charge)
		want(created, http.StatusCreated, "")
		id := created.json(t)["operation_id"].(string)
		want(e.post(charge), http.StatusOK, "")
		want(e.post(strings.Replace(charge, "5000", "4000", 1)), http.StatusConflict, "payload_conflict")
		want(e.post(`{"target":`), http.StatusBadRequest, "malformed_request")
		want(e.post(`{"target":"payments","operation_type":"charge","intent_ref":"big","payload":{"pad":"`+
			strings.Repeat("x", 5000)+`"}}`), http.StatusRequestEntityTooLarge, "body_too_large")
		want(e.do(http.MethodPost, "/api/v1/operations", "text/plain", []byte(charge)),
			http.StatusUnsupportedMediaType, "unsupported_media_type")
		for name, body := range map[string]string{
			"UnknownTarget": strings.Replace(charge, `"payments"`, `"nowhere"`, 1),
			"MissingFields": `{"target":"payments","payload":{}}`,
			"LongIntent":    strings.Replace(charge, "approval-1", strings.Repeat("i", 257), 1),
			"PastDeadline":  `{"target":"payments","operation_type":"charge","intent_ref":"x","payload":{},"deadline":"2001-01-01T00:00:00Z"}`,
			"BadType":       strings.Replace(charge, `"charge"`, `"charge me"`, 1),
		} {
			t.Run("Create422/"+name, func(t *testing.T) { wantError(t, e.post(body), http.StatusUnprocessableEntity, "invalid") })
		}
		want(down.post(strings.Replace(charge, "approval-1", "down", 1)), http.StatusInternalServerError, "internal")
		wantAway(away.post(strings.Replace(charge, "approval-1", "away", 1)))

		// getOperation
		got := e.do(http.MethodGet, "/api/v1/operations/"+id, "", nil)
		want(got, http.StatusOK, "")
		if got.json(t)["operation_id"] != id {
			t.Fatalf("GET returned %s", got.body)
		}
		want(e.do(http.MethodGet, "/api/v1/operations/"+id, "", nil, "Authorization", globex), http.StatusNotFound, "not_found")
		want(e.do(http.MethodGet, "/api/v1/operations/"+uuid.NewString(), "", nil), http.StatusNotFound, "not_found")
		want(e.do(http.MethodGet, "/api/v1/operations/not-a-uuid", "", nil), http.StatusNotFound, "not_found")
		want(down.do(http.MethodGet, "/api/v1/operations/"+id, "", nil), http.StatusInternalServerError, "internal")
		wantAway(away.do(http.MethodGet, "/api/v1/operations/"+id, "", nil))

		// listOperations
		for i := range 3 {
			want(e.post(strings.Replace(charge, "approval-1", fmt.Sprintf("page-%d", i), 1)), http.StatusCreated, "")
		}
		byIntent := e.do(http.MethodGet, "/api/v1/operations?intent_ref=approval-1", "", nil)
		want(byIntent, http.StatusOK, "")
		if ops := byIntent.json(t)["operations"].([]any); len(ops) != 1 || ops[0].(map[string]any)["operation_id"] != id {
			t.Fatalf("by intent_ref: %s", byIntent.body)
		}
		path, seen := "/api/v1/operations?limit=3&state=PREPARED", 0
		for pages := 0; path != ""; pages++ {
			if pages > 3 {
				t.Fatal("pagination does not end")
			}
			r := e.do(http.MethodGet, path, "", nil)
			want(r, http.StatusOK, "")
			m := r.json(t)
			seen += len(m["operations"].([]any))
			path = ""
			if next, _ := m["next_cursor"].(string); next != "" {
				path = "/api/v1/operations?limit=3&state=PREPARED&cursor=" + next
			}
		}
		if seen != 4 {
			t.Fatalf("paged through %d operations, want 4", seen)
		}
		for _, q := range []string{"limit=0", "limit=501", "limit=x", "state=DONE", "cursor=zzz"} {
			want(e.do(http.MethodGet, "/api/v1/operations?"+q, "", nil), http.StatusUnprocessableEntity, "invalid")
		}
		want(down.do(http.MethodGet, "/api/v1/operations", "", nil), http.StatusInternalServerError, "internal")
		wantAway(away.do(http.MethodGet, "/api/v1/operations", "", nil))

		// 401 on every authenticated operation, with WWW-Authenticate (the
		// document requires the header).
		for name, h := range unauthorized {
			t.Run("Unauthorized/"+name, func(t *testing.T) {
				for _, r := range []response{
					e.post(strings.Replace(charge, "approval-1", "unauth", 1), "Authorization", h),
					e.do(http.MethodGet, "/api/v1/operations", "", nil, "Authorization", h),
					e.do(http.MethodGet, "/api/v1/operations/"+id, "", nil, "Authorization", h),
				} {
					wantError(t, r, http.StatusUnauthorized, "unauthorized")
				}
			})
		}
		// The scheme name is case-insensitive (RFC 9110, section 11.1).
		want(e.do(http.MethodGet, "/api/v1/operations/"+id, "", nil, "Authorization", "bearer "+e.token), http.StatusOK, "")

		// 429 on every operation, from a server whose tokens may send one
		// request and then one a minute; 503 from one whose only create
		// slot is held.
		limited := serve(t, s, web.Config{Limits: web.Limits{RateLimit: 1.0 / 60, RateBurst: 1}})
		limited.api, limited.client, limited.token = e.api, e.client, e.token
		want(limited.do(http.MethodGet, "/api/v1/operations", "", nil), http.StatusOK, "")
		want(limited.post(charge), http.StatusTooManyRequests, "rate_limited")
		want(limited.do(http.MethodGet, "/api/v1/operations/"+id, "", nil), http.StatusTooManyRequests, "rate_limited")
		want(limited.do(http.MethodGet, "/api/v1/operations", "", nil), http.StatusTooManyRequests, "rate_limited")
		gated := gatedStore{store: s, entered: make(chan struct{}, 1), gate: make(chan struct{})}
		busy := serve(t, s, web.Config{Store: gated, Limits: web.Limits{MaxCreates: 1, CreateWait: 50 * time.Millisecond}})
		busy.api, busy.client, busy.token = e.api, e.client, e.token
		held := make(chan response, 1)
		go func() { held <- busy.post(strings.Replace(charge, "approval-1", "held", 1)) }()
		<-gated.entered
		want(busy.post(strings.Replace(charge, "approval-1", "busy", 1)), http.StatusServiceUnavailable, "overloaded")
		close(gated.gate)
		want(<-held, http.StatusCreated, "")

		// openAPI
		want(e.do(http.MethodGet, "/api/v1/openapi.json", "", nil, "Authorization", ""), http.StatusOK, "")

		if missing := e.api.unexercised(); len(missing) > 0 {
			t.Fatalf("documented responses this test never produced: %v", missing)
		}
	})
}

// tokenID finds the stored id of a secret.
func tokenID(t *testing.T, s store, secret string) string {
	t.Helper()
	tok, err := s.TokenByHash(context.Background(), ledger.HashToken(secret))
	if err != nil {
		t.Fatalf("token not stored: %v", err)
	}
	return tok.ID
}

// The checker itself: each exchange here breaks the document in one way
// and must be refused; a conforming one must pass. Without this, a checker
// that accepted everything would let every test above pass.
func TestOpenAPI_CheckRejects(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(web.New(web.Config{Targets: testTargets}))
	t.Cleanup(srv.Close)
	doc := loadAPIDoc(t, srv.URL)

	id, key := uuid.NewString(), uuid.NewString()
	op := func(extra string) string {
		return `{"operation_id":"` + id + `","tenant":"acme","target":"payments","operation_type":"charge",
			"intent_ref":"a","state":"PREPARED","status":"Scheduled","remote_key":"` + key + `",
			"payload_hash":"00","attempts":0,"created_at":"2030-01-01T00:00:00Z","updated_at":"2030-01-01T00:00:00Z"` + extra + `}`
	}
	valid := `{"target":"payments","operation_type":"charge","intent_ref":"a","payload":{}}`
	jsonCT := http.Header{"Content-Type": {"application/json"}}
	for name, c := range map[string]struct {
		method, path, auth, body string
		status                   int
		header                   http.Header
		resp                     string
		refusal                  string // "" for a conforming exchange; else part of the expected error
	}{
		"Get200":               {"GET", "/api/v1/operations/" + id, "Bearer t", "", 200, jsonCT, op(""), ""},
		"Get200Deadline":       {"GET", "/api/v1/operations/" + id, "Bearer t", "", 200, jsonCT, op(`,"deadline":"2030-01-02T00:00:00.123456Z"`), ""},
		"Create201":            {"POST", "/api/v1/operations", "Bearer t", valid, 201, http.Header{"Content-Type": {"application/json"}, "Location": {"/api/v1/operations/" + id}}, op(""), ""},
		"Get404":               {"GET", "/api/v1/operations/" + id, "Bearer t", "", 404, jsonCT, `{"error":"not_found","message":"operation not found"}`, ""},
		"NotTheAPI":            {"GET", "/metrics", "", "", 418, nil, "anything", ""},
		"UndocumentedStatus":   {"GET", "/api/v1/operations/" + id, "Bearer t", "", 418, jsonCT, `{"error":"internal","message":"x"}`, "status is not supported"},
		"MissingField":         {"GET", "/api/v1/operations/" + id, "Bearer t", "", 200, jsonCT, strings.Replace(op(""), `"tenant":"acme",`, "", 1), `"tenant" is missing`},
		"UndocumentedField":    {"GET", "/api/v1/operations/" + id, "Bearer t", "", 200, jsonCT, op(`,"payload":{"amount":5}`), `"payload" is unsupported`},
		"StateNotInEnum":       {"GET", "/api/v1/operations/" + id, "Bearer t", "", 200, jsonCT, strings.Replace(op(""), "PREPARED", "DONE", 1), `"/state"`},
		"IDNotUUID":            {"GET", "/api/v1/operations/" + id, "Bearer t", "", 200, jsonCT, strings.Replace(op(""), id, "42", 1), `format "uuid"`},
		"TimeNotRFC3339":       {"GET", "/api/v1/operations/" + id, "Bearer t", "", 200, jsonCT, op(`,"deadline":"tomorrow"`), `format "date-time"`},
		"AttemptsNotInteger":   {"GET", "/api/v1/operations/" + id, "Bearer t", "", 200, jsonCT, strings.Replace(op(""), `"attempts":0`, `"attempts":"0"`, 1), `"/attempts"`},
		"ErrorCodeNotInEnum":   {"GET", "/api/v1/operations/" + id, "Bearer t", "", 404, jsonCT, `{"error":"gone","message":"x"}`, `"/error"`},
		"ErrorWithoutMessage":  {"GET", "/api/v1/operations/" + id, "Bearer t", "", 404, jsonCT, `{"error":"not_found"}`, "missing property 'message'"},
		"NotJSON":              {"GET", "/api/v1/operations/" + id, "Bearer t", "", 200, http.Header{"Content-Type": {"text/plain"}}, op(""), "Content-Type"},
		"401NoWWWAuthenticate": {"GET", "/api/v1/operations/" + id, "", "", 401, jsonCT, `{"error":"unauthorized","message":"x"}`, `"WWW-Authenticate" missing`},
		"201NoLocation":        {"POST", "/api/v1/operations", "Bearer t", valid, 201, jsonCT, op(""), `"Location" missing`},
		"ListWithoutArray":     {"GET", "/api/v1/operations", "Bearer t", "", 200, jsonCT, `{"next_cursor":"x"}`, `"operations" is missing`},
		"AcceptedNoToken":      {"GET", "/api/v1/operations/" + id, "", "", 200, jsonCT, op(""), "no bearer token"},
		"AcceptedUnknownField": {"POST", "/api/v1/operations", "Bearer t", strings.Replace(valid, "{", `{"tenant":"globex",`, 1), 200, jsonCT, op(""), "'tenant' not allowed"},
		"AcceptedTrailingData": {"POST", "/api/v1/operations", "Bearer t", valid + "{}", 200, jsonCT, op(""), "not one JSON value"},
		"RefusedValidRequest":  {"POST", "/api/v1/operations", "Bearer t", valid, 400, jsonCT, `{"error":"malformed_request","message":"x"}`, "refused a request the document allows"},
		"UndocumentedMethod":   {"DELETE", "/api/v1/operations/" + id, "Bearer t", "", 404, jsonCT, `{"error":"not_found","message":"x"}`, "method not allowed"},
		"UndocumentedPath":     {"GET", "/api/v1/tokens", "Bearer t", "", 404, jsonCT, `{"error":"not_found","message":"x"}`, "no matching operation"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequest(c.method, srv.URL+c.path, strings.NewReader(c.body))
			if c.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			if c.auth != "" {
				req.Header.Set("Authorization", c.auth)
			}
			err := doc.check(req, []byte(c.body), c.status, c.header, []byte(c.resp))
			switch {
			case c.refusal == "" && err != nil:
				t.Fatalf("a conforming exchange was refused: %v", err)
			case c.refusal != "" && err == nil:
				t.Fatalf("a non-conforming exchange passed; want an error about %s", c.refusal)
			case c.refusal != "" && !strings.Contains(err.Error(), c.refusal):
				t.Fatalf("refused for another reason than %s: %v", c.refusal, err)
			}
		})
	}
}
