package client

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Code is an API error code: the "error" field of settle's error bodies.
type Code string

// The API's error codes, as its OpenAPI document lists them. Each has a
// sentinel error below for errors.Is.
const (
	CodeMalformedRequest     Code = "malformed_request"      // 400
	CodeUnauthorized         Code = "unauthorized"           // 401
	CodeNotFound             Code = "not_found"              // 404
	CodeMethodNotAllowed     Code = "method_not_allowed"     // 405
	CodePayloadConflict      Code = "payload_conflict"       // 409
	CodeBodyTooLarge         Code = "body_too_large"         // 413
	CodeUnsupportedMediaType Code = "unsupported_media_type" // 415
	CodeInvalid              Code = "invalid"                // 422
	CodeRateLimited          Code = "rate_limited"           // 429
	CodeInternal             Code = "internal"               // 500
	CodeOverloaded           Code = "overloaded"             // 503
)

// Sentinels for errors.Is, one per API error code: errors.Is(err,
// ErrPayloadConflict) holds for the *APIError of a 409 payload_conflict.
// Use errors.As with *APIError for the message, status and Retry-After.
var (
	// ErrMalformedRequest: the request was not one well-formed JSON
	// object of the documented fields (400).
	ErrMalformedRequest error = Code(CodeMalformedRequest)
	// ErrUnauthorized: the API token is missing, unknown or revoked (401).
	ErrUnauthorized error = Code(CodeUnauthorized)
	// ErrNotFound: no such operation for this token's tenant (404);
	// another tenant's operation looks the same.
	ErrNotFound error = Code(CodeNotFound)
	// ErrMethodNotAllowed: the path exists but not with this method (405).
	ErrMethodNotAllowed error = Code(CodeMethodNotAllowed)
	// ErrPayloadConflict: the intent is already registered with another
	// payload or target (409). Nothing changed and nothing was sent; a
	// genuinely new action needs a new intent reference.
	ErrPayloadConflict error = Code(CodePayloadConflict)
	// ErrBodyTooLarge: the request body is over the server's limit (413).
	ErrBodyTooLarge error = Code(CodeBodyTooLarge)
	// ErrUnsupportedMediaType: the body was not application/json (415).
	ErrUnsupportedMediaType error = Code(CodeUnsupportedMediaType)
	// ErrInvalid: a field breaks the API's rules (422); the message names it.
	ErrInvalid error = Code(CodeInvalid)
	// ErrRateLimited: the token sent more than its rate (429); nothing was
	// done. APIError.RetryAfter says when to send again.
	ErrRateLimited error = Code(CodeRateLimited)
	// ErrInternal: the request failed on settle's side (500). A
	// registration may have been committed; Register retries it.
	ErrInternal error = Code(CodeInternal)
	// ErrOverloaded: the server had no room for another registration
	// (503); nothing was created. APIError.RetryAfter says when to retry.
	ErrOverloaded error = Code(CodeOverloaded)
)

// Error makes a Code a sentinel error.
func (c Code) Error() string { return "settle: " + string(c) }

// APIError is an answer of the API other than 2xx.
type APIError struct {
	Status  int    // the HTTP status
	Code    Code   // the body's "error"; empty when the body was not settle's (a proxy's 502)
	Message string // the body's "message", or the status text
	// RequestID is the X-Request-Id settle answered with: quote it when
	// reporting a problem.
	RequestID string
	// RetryAfter is the Retry-After header of a 429 or 503, zero when
	// absent.
	RetryAfter time.Duration
}

// Error reports the status, code and message.
func (e *APIError) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("settle: %d: %s", e.Status, e.Message)
	}
	return fmt.Sprintf("settle: %d %s: %s", e.Status, e.Code, e.Message)
}

// Is matches the sentinel of e's code.
func (e *APIError) Is(target error) bool {
	c, ok := target.(Code)
	return ok && e.Code != "" && c == e.Code
}

// apiError reads an error answer.
func apiError(resp *http.Response, body []byte) *APIError {
	e := &APIError{Status: resp.StatusCode, RequestID: resp.Header.Get("X-Request-Id")}
	var b struct {
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &b) == nil && b.Error != "" {
		e.Code, e.Message = Code(b.Error), b.Message
	} else {
		e.Message = http.StatusText(resp.StatusCode)
	}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
		e.RetryAfter = time.Duration(s) * time.Second
	}
	return e
}
