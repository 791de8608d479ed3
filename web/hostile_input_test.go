package web_test

import (
	"net/http"
	"strings"
	"testing"

	"settle/web"
)

// A client's text that no store can take as it is — NUL, invalid UTF-8,
// far too long — is a 4xx naming the problem on both stores, never a 500
// and never stored. (A payload is the client's own bytes, kept and sent
// exactly as canonicalised; a NUL inside one of its strings is data.)
func TestAPI_HostileTextIsRefused(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("r", 5000)
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		e := serve(t, open(t), web.Config{})
		for _, c := range []struct{ name, method, path, body string }{
			{"ListIntentNUL", http.MethodGet, "/api/v1/operations?intent_ref=a%00b", ""},
			{"ListIntentInvalidUTF8", http.MethodGet, "/api/v1/operations?intent_ref=%FF%FE", ""},
			{"ListIntentLong", http.MethodGet, "/api/v1/operations?intent_ref=" + long, ""},
			{"ListStateNUL", http.MethodGet, "/api/v1/operations?state=SUCC%00EEDED", ""},
			{"ListCursorNUL", http.MethodGet, "/api/v1/operations?cursor=%00", ""},
			{"GetIDNUL", http.MethodGet, "/api/v1/operations/op%00x", ""},
			{"CreateIntentNUL", http.MethodPost, "/api/v1/operations",
				`{"target":"payments","operation_type":"charge","intent_ref":"a\u0000b","payload":{"amount":1}}`},
			{"CreateTypeNUL", http.MethodPost, "/api/v1/operations",
				`{"target":"payments","operation_type":"ch\u0000arge","intent_ref":"ok-1","payload":{"amount":1}}`},
			{"CreateTargetNUL", http.MethodPost, "/api/v1/operations",
				`{"target":"pay\u0000ments","operation_type":"charge","intent_ref":"ok-2","payload":{"amount":1}}`},
			{"CreateIntentLong", http.MethodPost, "/api/v1/operations",
				`{"target":"payments","operation_type":"charge","intent_ref":"` + long + `","payload":{"amount":1}}`},
		} {
			t.Run(c.name, func(t *testing.T) {
				ct := ""
				if c.body != "" {
					ct = "application/json"
				}
				r := e.do(c.method, c.path, ct, []byte(c.body))
				if r.status < 400 || r.status >= 500 {
					t.Fatalf("%s %.80s: %d %s; want a 4xx", c.method, c.path, r.status, r.body)
				}
				if m := r.json(t); m["error"] == nil || m["message"] == nil {
					t.Fatalf("error reply without error and message: %s", r.body)
				}
			})
		}
		if r := e.do(http.MethodGet, "/api/v1/operations", "", nil); r.status != http.StatusOK ||
			strings.Contains(string(r.body), `"intent_ref":"ok-`) {
			t.Fatalf("after the refusals: %d %s; want nothing stored", r.status, r.body)
		}
	})
}
