package ledger

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
)

// Unavailable reports whether err says the database could not be reached
// or cannot take writes right now, rather than that it refused this
// request: a refused or reset connection, a server shutting down or still
// starting, a standby answering a write (a failover in progress, its
// primary gone and the new one not promoted yet). Such a request may be
// retried as it is; the web layer answers it 503 with Retry-After.
//
// It reads the driver's error through SQLSTATE and net.Error, so the
// ledger imports no driver.
func Unavailable(err error) bool {
	if err == nil {
		return false
	}
	var state interface{ SQLState() string }
	if errors.As(err, &state) {
		code := state.SQLState()
		switch {
		case strings.HasPrefix(code, "08"), // connection exception
			code == "57P01", // admin_shutdown
			code == "57P02", // crash_shutdown
			code == "57P03", // cannot_connect_now: starting up, or a standby
			code == "25006", // read_only_sql_transaction: connected to a standby
			code == "53300": // too_many_connections
			return true
		}
		return false
	}
	// A request that ran out of time, or whose client left, says nothing
	// of the database (context.DeadlineExceeded is a net.Error too).
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return false
	}
	var opErr *net.OpError
	switch {
	case errors.As(err, &opErr),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.ErrUnexpectedEOF):
		return true
	}
	// pgx marks the errors of a connection that failed before the request
	// reached the server (a closed connection, a failed connect).
	var safe interface{ SafeToRetry() bool }
	if errors.As(err, &safe) && safe.SafeToRetry() {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "failed to connect") || strings.Contains(msg, "conn closed")
}
