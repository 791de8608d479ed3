package web

import (
	"crypto/rand"
	"encoding/hex"

	"github.com/labstack/echo/v4"
)

// MaxRequestIDLength bounds an inbound X-Request-Id that settle keeps.
const MaxRequestIDLength = 64

// requestID gives every request one id of settle's choosing. A caller's
// X-Request-Id is kept only when it is short and plain ([A-Za-z0-9-],
// 1–64 characters), so that it can tie a client's log to settle's; any
// other value — long, with spaces, quotes, control characters, non-ASCII
// or anything a log reader could mistake for structure — is replaced by a
// fresh random id. The chosen id is written back into the request header
// (which Echo's request logger reads first) and into the response header.
func requestID(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Request().Header.Get(echo.HeaderXRequestID)
		if !plainRequestID(id) {
			id = newRequestID()
		}
		c.Request().Header.Set(echo.HeaderXRequestID, id)
		c.Response().Header().Set(echo.HeaderXRequestID, id)
		return next(c)
	}
}

func plainRequestID(s string) bool {
	if len(s) == 0 || len(s) > MaxRequestIDLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// newRequestID returns 128 random bits in hex.
func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
