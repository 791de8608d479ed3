package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"settle/ledger"
)

// createRequest is the body of POST /api/v1/operations.
type createRequest struct {
	Target        string          `json:"target"`
	OperationType string          `json:"operation_type"`
	IntentRef     string          `json:"intent_ref"`
	Payload       json.RawMessage `json:"payload"`
	Deadline      *string         `json:"deadline"`

	deadline *time.Time
}

// decodeCreate reads and validates a create request: 415 for a non-JSON
// content type, 413 above limit, 400 for malformed JSON, and ledger.EInvalid
// (422) with a precise message for a well-formed but unacceptable request.
func decodeCreate(r *http.Request, limit int64) (createRequest, error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get(echo.HeaderContentType))
	if err != nil || mt != echo.MIMEApplicationJSON {
		return createRequest{}, echo.NewHTTPError(http.StatusUnsupportedMediaType, "Content-Type must be application/json")
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return createRequest{}, echo.NewHTTPError(http.StatusBadRequest, "cannot read the request body")
	}
	if int64(len(body)) > limit {
		return createRequest{}, echo.NewHTTPError(http.StatusRequestEntityTooLarge,
			fmt.Sprintf("request body exceeds %d bytes", limit))
	}
	return parseCreate(body)
}

// parseCreate is the pure part of decodeCreate, fuzzed on its own.
func parseCreate(body []byte) (createRequest, error) {
	var req createRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return req, echo.NewHTTPError(http.StatusBadRequest, "malformed JSON: "+jsonProblem(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return req, echo.NewHTTPError(http.StatusBadRequest, "malformed JSON: unexpected data after the object")
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
	if req.Payload[0] != '{' {
		return req, ledger.Errorf(ledger.EInvalid, "payload must be a JSON object")
	}
	if req.Deadline != nil {
		d, err := time.Parse(time.RFC3339Nano, *req.Deadline)
		if err != nil {
			return req, ledger.Errorf(ledger.EInvalid, "deadline must be an RFC 3339 time, e.g. 2030-01-02T15:04:05Z")
		}
		req.deadline = &d
	}
	return req, nil
}

// jsonProblem describes a decoding error without echoing the input.
func jsonProblem(err error) string {
	var (
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("syntax error at byte %d", syn.Offset)
	case errors.As(err, &typ):
		return fmt.Sprintf("field %q must be a %s", typ.Field, typ.Type)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the body is empty or truncated"
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return "unknown field " + strings.TrimPrefix(err.Error(), "json: unknown field ")
	}
	return "the body must be one JSON object"
}
