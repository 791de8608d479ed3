package decode

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/labstack/echo/v4"

	"settle/ledger"
)

// FuzzParseCreate: any body yields either a request whose required fields
// are present, whose intent_ref is readable text and whose payload is a
// JSON object that canonicalises without change, or a 400/422 error — never a panic, never another kind of error.
func FuzzParseCreate(f *testing.F) {
	f.Add([]byte(`{"target":"payments","operation_type":"charge","intent_ref":"a","payload":{"amount":1}}`))
	f.Add([]byte(`{"target":"p","operation_type":"c","intent_ref":"a","payload":{},"deadline":"2030-01-01T00:00:00Z"}`))
	f.Add([]byte(`{"payload":[1,2]}`))
	f.Add([]byte(`{"target":`))
	f.Add([]byte(`{} {}`))
	f.Add([]byte("\x00\xff"))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := ParseCreate(body)
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
		if err := ledger.CheckText("intent_ref", req.IntentRef, ledger.MaxIntentRef); err != nil {
			t.Fatalf("accepted an intent_ref the ledger refuses: %v", err)
		}
		if _, _, err := ledger.Canonicalize(req.Payload); err != nil {
			t.Fatalf("accepted a payload the ledger refuses: %v", err)
		}
	})
}

func TestWellFormedString(t *testing.T) {
	for raw, want := range map[string]bool{
		`null`:                 true,
		`"plain"`:              true,
		`"caf\u00e9 😀"`:        true,
		`"\ud83d\ude00"`:       true,
		`"\\ud800"`:            true, // an escaped backslash, then text
		`"a\"b\\"`:             true,
		"\"a\xffb\"":           false,
		`"\ud800"`:             false,
		`"\ud800x"`:            false,
		`"\udc00"`:             false,
		`"\ud800\ud800\udc00"`: false,
		`"\ud800\n"`:           false,
		`"\udc00\ud800"`:       false,
	} {
		if got := wellFormedString(json.RawMessage(raw)); got != want {
			t.Errorf("wellFormedString(%s) = %v, want %v", raw, got, want)
		}
	}
}
