package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"settle/ledger"
	"settle/web"
)

const charge = `{"target":"payments","operation_type":"charge","intent_ref":"approval-1",
	"payload":{"amount":5000,"currency":"EUR","customer":"c-1"}}`

func TestAPI_Create(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		e := serve(t, open(t), web.Config{Limits: web.Limits{BodyLimit: 4096}})

		first := e.post(charge)
		if first.status != http.StatusCreated {
			t.Fatalf("first POST: %d %s", first.status, first.body)
		}
		op := first.json(t)
		if first.header.Get("Location") != "/api/v1/operations/"+op["operation_id"].(string) {
			t.Fatalf("Location = %q", first.header.Get("Location"))
		}
		if op["state"] != "PREPARED" || op["status"] != "Scheduled" || op["tenant"] != "acme" ||
			op["remote_key"] == "" || op["deadline"] == nil || op["attempts"] != 0.0 {
			t.Fatalf("operation = %s", first.body)
		}
		if strings.Contains(string(first.body), "5000") {
			t.Fatal("the response must not echo the payload")
		}
		// Committed before the 201: another reader sees it at once.
		if _, err := e.store.Get(context.Background(), "acme", op["operation_id"].(string)); err != nil {
			t.Fatalf("201 sent but the operation is not readable: %v", err)
		}
		// Its creation event names the request, by the id the client got.
		evs, err := e.store.Events(context.Background(), "acme", op["operation_id"].(string))
		rid := first.header.Get("X-Request-Id")
		if err != nil || len(evs) != 1 || rid == "" || !strings.Contains(string(evs[0].Evidence), `"request_id": "`+rid+`"`) &&
			!strings.Contains(string(evs[0].Evidence), `"request_id":"`+rid+`"`) {
			t.Fatalf("creation event %+v (%v); want evidence naming request %q", evs, err, rid)
		}

		same := e.post(`{"payload":{"customer":"c-1", "currency":"EUR","amount":5000},
			"intent_ref":"approval-1","operation_type":"charge","target":"payments"}`)
		if same.status != http.StatusOK || same.json(t)["operation_id"] != op["operation_id"] {
			t.Fatalf("same intent, same payload: %d %s", same.status, same.body)
		}

		conflict := e.post(strings.Replace(charge, "5000", "4000", 1))
		wantError(t, conflict, http.StatusConflict, "payload_conflict")
		if n, _ := e.store.PayloadConflicts(context.Background(), "acme", ledger.Since(time.Time{})); n != 1 {
			t.Fatalf("payload conflicts counted: %d", n)
		}
		got, _ := e.store.Get(context.Background(), "acme", op["operation_id"].(string))
		if got.State != ledger.Prepared || !strings.Contains(string(got.Payload), "5000") {
			t.Fatal("a conflicting POST changed the operation")
		}

		for name, c := range map[string]struct {
			body, ctype string
			status      int
			code        string
		}{
			"MalformedJSON":    {`{"target":`, "application/json", 400, "malformed_request"},
			"NotAnObject":      {`[1,2]`, "application/json", 400, "malformed_request"},
			"TrailingData":     {charge + `{}`, "application/json", 400, "malformed_request"},
			"UnknownField":     {`{"tenant":"globex","target":"payments"}`, "application/json", 400, "malformed_request"},
			"WrongType":        {`{"target":5}`, "application/json", 400, "malformed_request"},
			"Empty":            {``, "application/json", 400, "malformed_request"},
			"UnknownTarget":    {strings.Replace(charge, `"payments"`, `"nowhere"`, 1), "application/json", 422, "invalid"},
			"PayloadNotObject": {`{"target":"payments","operation_type":"charge","intent_ref":"x","payload":[1]}`, "application/json", 422, "invalid"},
			"PayloadString":    {`{"target":"payments","operation_type":"charge","intent_ref":"x","payload":"{}"}`, "application/json", 422, "invalid"},
			"MissingFields":    {`{"target":"payments","payload":{}}`, "application/json", 422, "invalid"},
			"EmptyIntent":      {`{"target":"payments","operation_type":"charge","intent_ref":" ","payload":{}}`, "application/json", 422, "invalid"},
			"NullPayload":      {`{"target":"payments","operation_type":"charge","intent_ref":"x","payload":null}`, "application/json", 422, "invalid"},
			"PastDeadline":     {`{"target":"payments","operation_type":"charge","intent_ref":"x","payload":{},"deadline":"2001-01-01T00:00:00Z"}`, "application/json", 422, "invalid"},
			"BadDeadline":      {`{"target":"payments","operation_type":"charge","intent_ref":"x","payload":{},"deadline":"tomorrow"}`, "application/json", 422, "invalid"},
			"TooLarge":         {`{"target":"payments","operation_type":"charge","intent_ref":"x","payload":{"pad":"` + strings.Repeat("x", 5000) + `"}}`, "application/json", 413, "body_too_large"},
			"TextPlain":        {charge, "text/plain", 415, "unsupported_media_type"},
			"NoContentType":    {charge, "", 415, "unsupported_media_type"},
			"JSONWithCharset":  {strings.Replace(charge, "approval-1", "approval-2", 1), "application/json; charset=utf-8", 201, ""},
		} {
			t.Run(name, func(t *testing.T) {
				r := e.do(http.MethodPost, "/api/v1/operations", c.ctype, []byte(c.body))
				if c.code == "" {
					if r.status != c.status {
						t.Fatalf("status %d: %s", r.status, r.body)
					}
					return
				}
				wantError(t, r, c.status, c.code)
			})
		}
		page, _ := e.store.List(context.Background(), ledger.ListFilter{Tenant: "acme"})
		if len(page.Operations) != 2 {
			t.Fatalf("bad requests left %d operations, want 2", len(page.Operations))
		}
	})
}

func TestAPI_Auth(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		e := serve(t, open(t), web.Config{})
		for name, h := range map[string]string{
			"Missing":   "",
			"NotBearer": "Basic YWxhZGRpbjpvcGVuc2VzYW1l",
			"Malformed": "Bearer nonsense",
			"Unknown":   "Bearer stl_" + strings.Repeat("A", 43),
		} {
			t.Run(name, func(t *testing.T) {
				for _, path := range []string{"/api/v1/operations", "/api/v1/operations/x"} {
					r := e.do(http.MethodGet, path, "", nil, "Authorization", h)
					wantError(t, r, http.StatusUnauthorized, "unauthorized")
					if r.header.Get("WWW-Authenticate") == "" {
						t.Fatal("401 without WWW-Authenticate")
					}
				}
				wantError(t, e.post(charge, "Authorization", h), http.StatusUnauthorized, "unauthorized")
			})
		}
		t.Run("Revoked", func(t *testing.T) {
			tokens, _ := e.store.ListTokens(context.Background(), "acme")
			if err := e.store.RevokeToken(adminCtx, "acme", tokens[0].ID, time.Now()); err != nil {
				t.Fatal(err)
			}
			wantError(t, e.post(charge), http.StatusUnauthorized, "unauthorized")
		})
	})
}

func TestAPI_TenantIsolation(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		e := serve(t, open(t), web.Config{})
		id := e.post(charge).json(t)["operation_id"].(string)
		own := e.do(http.MethodGet, "/api/v1/operations/"+id, "", nil)
		if own.status != http.StatusOK || own.json(t)["operation_id"] != id {
			t.Fatalf("own operation: %d %s", own.status, own.body)
		}
		globex := "Bearer " + e.newToken("globex")
		other := e.do(http.MethodGet, "/api/v1/operations/"+id, "", nil, "Authorization", globex)
		missing := e.do(http.MethodGet, "/api/v1/operations/6f1c2f7e-0d7b-4a47-9b8e-2f0b1d1a9c11", "", nil, "Authorization", globex)
		wantError(t, other, http.StatusNotFound, "not_found")
		if string(other.body) != string(missing.body) {
			t.Fatalf("another tenant's operation is distinguishable:\n%s\n%s", other.body, missing.body)
		}
		list := e.do(http.MethodGet, "/api/v1/operations?intent_ref=approval-1", "", nil, "Authorization", globex)
		if list.status != 200 || len(list.json(t)["operations"].([]any)) != 0 {
			t.Fatalf("another tenant listed: %s", list.body)
		}
		// The same intent under another tenant is another operation.
		r := e.post(charge, "Authorization", globex)
		if r.status != http.StatusCreated || r.json(t)["tenant"] != "globex" || r.json(t)["operation_id"] == id {
			t.Fatalf("globex POST: %d %s", r.status, r.body)
		}
	})
}

func TestAPI_List(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		e := serve(t, open(t), web.Config{})
		for i := 0; i < 5; i++ {
			if r := e.post(strings.Replace(charge, "approval-1", fmt.Sprintf("a-%d", i), 1)); r.status != 201 {
				t.Fatalf("POST %d: %d", i, r.status)
			}
		}
		seen := map[any]bool{}
		path := "/api/v1/operations?limit=2"
		for pages := 1; ; pages++ {
			r := e.do(http.MethodGet, path, "", nil)
			if r.status != 200 {
				t.Fatalf("list: %d %s", r.status, r.body)
			}
			m := r.json(t)
			for _, op := range m["operations"].([]any) {
				seen[op.(map[string]any)["operation_id"]] = true
			}
			next, _ := m["next_cursor"].(string)
			if next == "" {
				if pages != 3 {
					t.Fatalf("%d pages, want 3", pages)
				}
				break
			}
			path = "/api/v1/operations?limit=2&cursor=" + next
		}
		if len(seen) != 5 {
			t.Fatalf("listed %d distinct operations, want 5", len(seen))
		}
		byIntent := e.do(http.MethodGet, "/api/v1/operations?intent_ref=a-3", "", nil).json(t)["operations"].([]any)
		if len(byIntent) != 1 || byIntent[0].(map[string]any)["intent_ref"] != "a-3" {
			t.Fatalf("by intent: %v", byIntent)
		}
		byState := e.do(http.MethodGet, "/api/v1/operations?state=SUCCEEDED", "", nil).json(t)["operations"].([]any)
		if len(byState) != 0 {
			t.Fatalf("by state: %v", byState)
		}
		for _, q := range []string{"limit=0", "limit=x", "limit=501", "state=DONE", "cursor=zzz"} {
			wantError(t, e.do(http.MethodGet, "/api/v1/operations?"+q, "", nil), 422, "invalid")
		}
	})
}

// 50 identical POSTs race: one 201, the rest 200 with the same operation.
// 50 POSTs for one intent with different payloads: one winner, the rest 409.
// All 50 run at once (MaxCreates above 50): the race is the point here,
// not the cap, which TestLimits_ConcurrentCreates tests.
func TestAPI_ConcurrentCreate(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		// Slots for all 50 at once: with the default tenant share (48 of
		// 64) two waited for one, and a loaded machine answered one 503.
		e := serve(t, open(t), web.Config{Limits: web.Limits{MaxCreates: 64, MaxCreatesPerTenant: 64}})
		race := func(body func(i int) string) map[int]int {
			var (
				wg       sync.WaitGroup
				mu       sync.Mutex
				statuses = map[int]int{}
				ids      = map[any]bool{}
				start    = make(chan struct{})
			)
			for i := 0; i < 50; i++ {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					<-start
					r := e.post(body(i))
					mu.Lock()
					defer mu.Unlock()
					statuses[r.status]++
					if r.status < 300 {
						ids[r.json(t)["operation_id"]] = true
					}
				}(i)
			}
			close(start)
			wg.Wait()
			if len(ids) > 1 {
				t.Fatalf("%d different operations for one intent", len(ids))
			}
			return statuses
		}
		same := race(func(int) string { return strings.Replace(charge, "approval-1", "same", 1) })
		if same[201] != 1 || same[200] != 49 {
			t.Fatalf("identical POSTs: %v, want one 201 and 49 200", same)
		}
		diff := race(func(i int) string {
			return fmt.Sprintf(`{"target":"payments","operation_type":"charge","intent_ref":"diff","payload":{"amount":%d}}`, i+1)
		})
		if diff[201] != 1 || diff[409] != 49 {
			t.Fatalf("conflicting POSTs: %v, want one 201 and 49 409", diff)
		}
	})
}

// crashAfterCommit commits the operation, then fails as if the process had
// died before answering: the client sees no success.
type crashAfterCommit struct {
	store
	once sync.Once
}

func (c *crashAfterCommit) Create(ctx context.Context, n ledger.NewOperation) (ledger.Operation, bool, error) {
	op, created, err := c.store.Create(ctx, n)
	crashed := false
	c.once.Do(func() { crashed = true })
	if crashed {
		panic("injected crash after commit")
	}
	return op, created, err
}

func TestAPI_CrashBetweenCommitAndResponse(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		s := open(t)
		e := serve(t, s, web.Config{Store: &crashAfterCommit{store: s}})
		first := e.post(charge)
		if first.status != http.StatusInternalServerError {
			t.Fatalf("crashed request: %d %s", first.status, first.body)
		}
		retry := e.post(charge)
		if retry.status != http.StatusOK {
			t.Fatalf("retried POST: %d %s, want 200 with the committed operation", retry.status, retry.body)
		}
		page, _ := s.List(context.Background(), ledger.ListFilter{Tenant: "acme"})
		if len(page.Operations) != 1 || page.Operations[0].ID != retry.json(t)["operation_id"] {
			t.Fatalf("%d operations after crash and retry, want exactly one", len(page.Operations))
		}
	})
}
