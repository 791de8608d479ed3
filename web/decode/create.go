// Package decode reads and validates the API's request bodies: what a
// client sent, checked field by field before anything reaches the ledger.
// It is small on purpose, so that the fuzz stage of scripts/test builds
// only it and the ledger with coverage instrumentation, not all of web.
package decode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"settle/ledger"
)

// Create is the body of POST /api/v1/operations.
type Create struct {
	Target        string          `json:"target"`
	OperationType string          `json:"operation_type"`
	IntentRef     string          `json:"intent_ref"`
	Payload       json.RawMessage `json:"payload"`
	Deadline      *string         `json:"deadline"`

	// At is Deadline parsed (nil when the client sent none).
	At *time.Time `json:"-"`
}

// CreateBody reads and validates a create request: 415 for a non-JSON
// content type, 413 above limit, 400 for malformed JSON, and ledger.EInvalid
// (422) with a precise message for a well-formed but unacceptable request.
func CreateBody(r *http.Request, limit int64) (Create, error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get(echo.HeaderContentType))
	if err != nil || mt != echo.MIMEApplicationJSON {
		return Create{}, echo.NewHTTPError(http.StatusUnsupportedMediaType, "Content-Type must be application/json")
	}
	// A Content-Length above the limit is refused before any byte is
	// read, so a client that sent Expect: 100-continue is answered at once.
	if r.ContentLength > limit {
		return Create{}, echo.NewHTTPError(http.StatusRequestEntityTooLarge,
			fmt.Sprintf("request body exceeds %d bytes", limit))
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return Create{}, echo.NewHTTPError(http.StatusBadRequest, "cannot read the request body")
	}
	if int64(len(body)) > limit {
		return Create{}, echo.NewHTTPError(http.StatusRequestEntityTooLarge,
			fmt.Sprintf("request body exceeds %d bytes", limit))
	}
	return ParseCreate(body)
}

// ParseCreate is the pure part of CreateBody, fuzzed on its own.
func ParseCreate(body []byte) (Create, error) {
	var req Create
	fields, err := createFields(body)
	if err != nil {
		return req, err
	}
	for _, f := range []struct {
		name string
		dst  any
	}{
		{"target", &req.Target}, {"operation_type", &req.OperationType}, {"intent_ref", &req.IntentRef},
		{"deadline", &req.Deadline}, {"payload", &req.Payload},
	} {
		raw, ok := fields[f.name]
		if !ok {
			continue
		}
		if err := json.Unmarshal(raw, f.dst); err != nil {
			return req, echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("malformed JSON: field %q must be a string", f.name))
		}
		// encoding/json repairs invalid UTF-8 and lone surrogates to U+FFFD,
		// which would turn two different references into one.
		if f.name != "payload" && !wellFormedString(raw) {
			return req, ledger.Errorf(ledger.EInvalid, "%s must be valid UTF-8 text (no invalid bytes or lone surrogate escapes)", f.name)
		}
	}
	var missing []string
	for _, f := range []struct{ name, value string }{
		{"target", req.Target}, {"operation_type", req.OperationType}, {"intent_ref", req.IntentRef},
	} {
		if strings.TrimSpace(f.value) == "" {
			missing = append(missing, f.name)
		}
	}
	if len(req.Payload) == 0 || string(req.Payload) == "null" {
		missing = append(missing, "payload")
	}
	if len(missing) > 0 {
		return req, ledger.Errorf(ledger.EInvalid, "missing or empty: %s", strings.Join(missing, ", "))
	}
	if err := ledger.CheckText("intent_ref", req.IntentRef, ledger.MaxIntentRef); err != nil {
		return req, err
	}
	if req.Payload[0] != '{' {
		return req, ledger.Errorf(ledger.EInvalid, "payload must be a JSON object")
	}
	// The ledger canonicalises again when it binds the target's fields;
	// checking here answers a payload the ledger would refuse (a duplicate
	// key, an inexact number) before anything else about the request.
	if _, _, err := ledger.Canonicalize(req.Payload); err != nil {
		return req, err
	}
	if req.Deadline != nil {
		d, err := time.Parse(time.RFC3339Nano, *req.Deadline)
		if err != nil {
			return req, ledger.Errorf(ledger.EInvalid, "deadline must be an RFC 3339 time, e.g. 2030-01-02T15:04:05Z")
		}
		req.At = &d
	}
	return req, nil
}

// fieldNames are the create request's fields, spelt exactly.
var fieldNames = []string{"target", "operation_type", "intent_ref", "payload", "deadline"}

// createFields splits the body into its top-level fields. encoding/json
// would match "TARGET" to target and let the last of two "target"s win, so
// the names are checked here: each must be one of fieldNames exactly, once.
func createFields(body []byte) (map[string]json.RawMessage, error) {
	bad := func(msg string) error {
		return echo.NewHTTPError(http.StatusBadRequest, "malformed JSON: "+msg)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	tok, err := dec.Token()
	if err != nil {
		return nil, bad(jsonProblem(err))
	}
	if tok != json.Delim('{') {
		return nil, bad("the body must be one JSON object")
	}
	fields := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, bad(jsonProblem(err))
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, bad(jsonProblem(err))
		}
		switch i := slices.IndexFunc(fieldNames, func(f string) bool { return strings.EqualFold(f, key) }); {
		case i < 0:
			return nil, bad("unknown field " + quoteKey(key))
		case fieldNames[i] != key:
			return nil, bad(fmt.Sprintf("unknown field %s: field names are case-sensitive; did you mean %q?", quoteKey(key), fieldNames[i]))
		}
		if _, dup := fields[key]; dup {
			return nil, bad(fmt.Sprintf("duplicate field %q: each field may appear once", key))
		}
		fields[key] = raw
	}
	if _, err := dec.Token(); err != nil {
		return nil, bad(jsonProblem(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, bad("unexpected data after the object")
	}
	return fields, nil
}

// wellFormedString reports whether raw, a JSON value, is null or a string
// literal that is valid UTF-8 and whose \u escapes pair their surrogates.
func wellFormedString(raw json.RawMessage) bool {
	if string(raw) == "null" {
		return true
	}
	if !utf8.Valid(raw) {
		return false
	}
	pendingHigh := false // the previous escape was a high surrogate
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			if pendingHigh {
				return false
			}
			continue
		}
		i++ // the escaped character
		if i >= len(raw) || raw[i] != 'u' || i+4 >= len(raw) {
			if pendingHigh {
				return false
			}
			continue
		}
		v, err := strconv.ParseUint(string(raw[i+1:i+5]), 16, 16)
		if err != nil {
			return false
		}
		i += 4
		switch r := rune(v); {
		case utf16.IsSurrogate(r) && r < 0xdc00: // high
			if pendingHigh {
				return false
			}
			pendingHigh = true
		case utf16.IsSurrogate(r): // low
			if !pendingHigh {
				return false
			}
			pendingHigh = false
		default:
			if pendingHigh {
				return false
			}
		}
	}
	return !pendingHigh
}

// quoteKey shows a client's field name quoted, escaped and shortened.
func quoteKey(k string) string {
	if r := []rune(k); len(r) > 40 {
		k = string(r[:40]) + "…"
	}
	return strconv.QuoteToASCII(k)
}

// jsonProblem describes a decoding error without echoing the input.
func jsonProblem(err error) string {
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("syntax error at byte %d", syn.Offset)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the body is empty or truncated"
	}
	return "the body must be one JSON object"
}
