package web

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"settle/ledger"
	"settle/views"
)

// pageError is a console refusal whose words the console chose.
type pageError struct {
	status  int
	message string
	signIn  bool // offer to sign in again
}

func (e *pageError) Error() string { return http.StatusText(e.status) + ": " + e.message }

// pageHeadings and pageMessages are what a console error page says for a
// status when no handler chose the words. A 404 always says the same
// thing, whatever its cause: another tenant's record must read exactly
// like one that does not exist.
var pageHeadings = map[int]string{
	http.StatusBadRequest:          "The request could not be read",
	http.StatusUnauthorized:        "Please sign in",
	http.StatusForbidden:           "Not allowed",
	http.StatusNotFound:            "Not found",
	http.StatusMethodNotAllowed:    "Not possible here",
	http.StatusServiceUnavailable:  "Not available right now",
	http.StatusInternalServerError: "Something went wrong",
}

var pageMessages = map[int]string{
	http.StatusBadRequest:         "The page could not understand what was sent. Go back and try again.",
	http.StatusUnauthorized:       "Sign in to use the settle console.",
	http.StatusForbidden:          "Your role does not allow this.",
	http.StatusNotFound:           "There is nothing at this address, or you do not have access to it.",
	http.StatusMethodNotAllowed:   "This address does not accept that kind of request.",
	http.StatusServiceUnavailable: "settle cannot do this right now. Try again in a minute.",
}

// htmlError renders the console's error page for status. Internal errors
// show the request id only; their text was logged by errorHandler.
func (s *server) htmlError(c echo.Context, status int, err error) {
	c.Set(liveKey, nil) // an error page is never live: it is the same for every address that has nothing
	v := views.ErrorPage{Layout: s.layout(c, "Error", ""), Status: status}
	v.Heading = pageHeadings[status]
	if v.Heading == "" {
		v.Heading = http.StatusText(status)
	}
	v.Message = pageMessages[status]
	var pe *pageError
	if errors.As(err, &pe) && status != http.StatusNotFound {
		v.Message, v.SignIn = pe.message, pe.signIn
	}
	if status == http.StatusUnprocessableEntity {
		v.Heading, v.Message = "That could not be used", ledger.ErrorMessage(err)
	}
	if status >= 500 && status != http.StatusServiceUnavailable {
		v.Heading = pageHeadings[http.StatusInternalServerError]
		v.Message = "settle could not show this page. Nothing was changed by it."
		v.RequestID = c.Response().Header().Get(echo.HeaderXRequestID)
	}
	if v.Message == "" {
		v.Message = http.StatusText(status)
	}
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(status)
		return
	}
	if rerr := s.render(c, status, views.Error(v)); rerr != nil {
		s.log.Error("render error page", "request_id", c.Response().Header().Get(echo.HeaderXRequestID), "err", rerr)
		_ = c.String(status, http.StatusText(status))
	}
}
