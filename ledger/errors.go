package ledger

import (
	"errors"
	"fmt"
)

// Code classifies an Error. The web layer maps each code to one HTTP status
// in one place.
type Code string

// Error codes.
const (
	EInvalid           Code = "invalid"
	ENotFound          Code = "not_found"
	EPayloadConflict   Code = "payload_conflict"
	EConflict          Code = "conflict"
	EStaleFence        Code = "stale_fence"
	EInvalidTransition Code = "invalid_transition"
	EUnauthorized      Code = "unauthorized"
	EForbidden         Code = "forbidden"
	EInternal          Code = "internal"
)

// Error is the ledger's one error type. Message is safe to show to the
// caller; it never contains payload bytes.
type Error struct {
	Code    Code
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("ledger: %s: %s", e.Code, e.Message) }

// Errorf returns an *Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, EInternal for
// any other non-nil error and "" for nil.
func ErrorCode(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EInternal
}

// ErrorMessage returns the caller-safe message of err, or a generic text for
// errors that are not *Error (their detail belongs in the log only).
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}
