package web

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/labstack/echo/v4"

	"settle/ledger"
)

// FuzzParseCreate: any body yields either a request whose required fields
// are present and whose payload is a JSON object that canonicalises without
// change, or a 400/422 error — never a panic, never another kind of error.
func FuzzParseCreate(f *testing.F) {
	f.Add([]byte(`{"target":"payments","operation_type":"charge","intent_ref":"a","payload":{"amount":1}}`))
	f.Add([]byte(`{"target":"p","operation_type":"c","intent_ref":"a","payload":{},"deadline":"2030-01-01T00:00:00Z"}`))
	f.Add([]byte(`{"payload":[1,2]}`))
	f.Add([]byte(`{"target":`))
	f.Add([]byte(`{} {}`))
	f.Add([]byte("\x00\xff"))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := parseCreate(body)
		if err != nil {
			var he *echo.HTTPError
			if errors.As(err, &he) {
				if he.Code != 400 {
					t.Fatalf("HTTP error %d", he.Code)
				}
				return
			}
			if ledger.ErrorCode(err) != ledger.EInvalid {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if req.Target == "" || req.OperationType == "" || req.IntentRef == "" {
			t.Fatal("accepted a request with an empty field")
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(req.Payload, &obj) != nil {
			t.Fatalf("accepted a payload that is not a JSON object: %q", req.Payload)
		}
		if _, _, err := ledger.Canonicalize(req.Payload); err != nil {
			t.Fatalf("accepted a payload the ledger refuses: %v", err)
		}
	})
}
