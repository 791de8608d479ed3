package web

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"settle/ledger"
)

// apiError is the JSON body of every API error.
type apiError struct {
	Error   string `json:"error"`
	Message string `json:"message"`
}

// statusOf maps a ledger error code to its one HTTP status.
func statusOf(code ledger.Code) int {
	switch code {
	case ledger.EInvalid:
		return http.StatusUnprocessableEntity
	case ledger.ENotFound:
		return http.StatusNotFound
	case ledger.EPayloadConflict, ledger.EConflict, ledger.EStaleFence, ledger.EInvalidTransition:
		return http.StatusConflict
	case ledger.EUnauthorized:
		return http.StatusUnauthorized
	case ledger.EForbidden:
		return http.StatusForbidden
	}
	return http.StatusInternalServerError
}

// httpCodes names the errors the HTTP layer itself raises.
var httpCodes = map[int]string{
	http.StatusBadRequest:            "malformed_request",
	http.StatusUnauthorized:          "unauthorized",
	http.StatusNotFound:              "not_found",
	http.StatusMethodNotAllowed:      "method_not_allowed",
	http.StatusRequestEntityTooLarge: "body_too_large",
	http.StatusUnsupportedMediaType:  "unsupported_media_type",
	http.StatusTooManyRequests:       "rate_limited",
	http.StatusServiceUnavailable:    "overloaded",
}

// unavailableRetry is the Retry-After, in seconds, of a request refused
// because the database cannot be reached or has no primary (a failover):
// long enough not to hammer a promotion, short enough to resume soon.
const unavailableRetry = "2"

// errorHandler is the one place errors become responses: HTML pages for
// the console, JSON for the API and webhooks. Internal errors are logged
// once, with the request id, and never shown.
func (s *server) errorHandler(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	var (
		status int
		body   apiError
		he     *echo.HTTPError
		pe     *pageError
	)
	switch {
	case errors.As(err, &pe):
		status, body.Error, body.Message = pe.status, httpCodes[pe.status], pe.message
	case errors.As(err, &he):
		status = he.Code
		body.Error = httpCodes[status]
		if body.Error == "" {
			body.Error = strings.ToLower(strings.ReplaceAll(http.StatusText(status), " ", "_"))
		}
		if msg, ok := he.Message.(string); ok {
			body.Message = msg
		} else {
			body.Message = http.StatusText(status)
		}
	case ledger.Unavailable(err):
		// No primary (a failover, a restart): the client is told to come
		// back. A create may have committed just before its connection
		// was cut; the retry with the same intent answers 200 then.
		status, body.Error = http.StatusServiceUnavailable, "unavailable"
		body.Message = "the database is unavailable (a failover or restart in progress); retry after the Retry-After header's seconds with the same request (a create answers 200 if it had been committed)"
		c.Response().Header().Set("Retry-After", unavailableRetry)
	default:
		code := ledger.ErrorCode(err)
		status, body.Error, body.Message = statusOf(code), string(code), ledger.ErrorMessage(err)
	}
	switch {
	case body.Error == "unavailable":
		// An outage fails every request at once: one line per few
		// seconds, with the count of those it stands for.
		s.outage.warn("request refused: database unavailable", "route", c.Path(), "request_id",
			c.Response().Header().Get(echo.HeaderXRequestID), "err", err)
	case status == http.StatusServiceUnavailable && he != nil && c.Response().Header().Get("Retry-After") != "":
		// settle's own refusal for lack of a slot (the only 503s with a
		// Retry-After): a flood drives these, so they are WARN,
		// rate-limited, and keep their message.
		s.shed.warn("request refused: overloaded", "route", c.Path(), "request_id",
			c.Response().Header().Get(echo.HeaderXRequestID))
	case status >= 500 && pe == nil: // a pageError is a refusal the console chose, not a failure
		s.log.Error("request failed", "route", c.Path(), "request_id",
			c.Response().Header().Get(echo.HeaderXRequestID), "err", err)
		body.Message = "internal error; the request id is in the X-Request-Id header"
	}
	// The console's pages get HTML pages; the API and the webhook
	// receiver keep their JSON errors.
	if s.signIn != nil && isConsolePath(c.Request().URL.Path) {
		s.htmlError(c, status, err)
		return
	}
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(status)
		return
	}
	_ = c.JSON(status, body)
}
