package target

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"time"
)

// Idle connection pool of the client's transport. The executor sends with
// 16 workers by default and the reconciler looks up with 8; 32 idle
// connections per target host keeps both busy without a dial. Idle
// connections are dropped after 30 s, below the idle timeouts providers and
// their load balancers commonly use (60 s and more), so that settle, not
// the target, normally closes an idle connection and no request races a
// close it could not see.
const (
	maxIdleConnsPerHost = 32
	maxIdleConns        = 256
	idleConnTimeout     = 30 * time.Second
)

// dialFunc opens a connection; tests pass one that wraps the real dialer.
type dialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// onceTransport is the client's transport: HTTP/1.1 over reused
// connections, for every request net/http will never re-send after a byte
// of it left the process, and a fresh connection for the rest.
//
// Go's Transport re-sends a failed request on its own only when the
// connection was reused (persistConn.shouldRetryRequest returns false
// first thing for a fresh one) and then only when either
//   - nothing was written (nothingWrittenError: the connection's byte
//     counter did not move) and the request has no body or a GetBody, or
//   - the request is "replayable" (Request.isReplayable): no body, or a
//     GetBody, and a GET, HEAD, OPTIONS or TRACE or an Idempotency-Key or
//     X-Idempotency-Key header — which the Stripe-style contracts send.
//
// So a request whose method changes something (every create) goes over a
// reused connection only when it has a body and no GetBody: then it is not
// replayable and, as its outgoing length is not zero, not retried even
// when nothing was written. Such a create without a body (a form contract
// whose fields are all empty encodes to no bytes) or with a GetBody (only a
// WrapTransport could have set one) goes over a connection of its own,
// which net/http never retries on. Lookups are GETs and may be re-sent by
// net/http on a reused connection: they read and change nothing.
type onceTransport struct {
	reuse *http.Transport // keep-alives on, for requests net/http never re-sends
	fresh *http.Transport // keep-alives off, for the rest
}

func newOnceTransport(dial dialFunc) *onceTransport {
	base := func(keepAlives bool) *http.Transport {
		return &http.Transport{
			Proxy:       http.ProxyFromEnvironment,
			DialContext: dial,
			// HTTP/2 is never negotiated: its transport retries refused streams.
			ForceAttemptHTTP2:   false,
			TLSNextProto:        map[string]func(string, *tls.Conn) http.RoundTripper{},
			TLSHandshakeTimeout: 10 * time.Second,
			DisableKeepAlives:   !keepAlives,
			MaxIdleConns:        maxIdleConns,
			MaxIdleConnsPerHost: maxIdleConnsPerHost,
			IdleConnTimeout:     idleConnTimeout,
		}
	}
	return &onceTransport{reuse: base(true), fresh: base(false)}
}

// RoundTrip sends req once, over a connection net/http will not re-send it
// on (see onceTransport).
func (o *onceTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if mayReplay(req) {
		return o.fresh.RoundTrip(req)
	}
	return o.reuse.RoundTrip(req)
}

// CloseIdleConnections closes the idle connections of the pool.
func (o *onceTransport) CloseIdleConnections() {
	o.reuse.CloseIdleConnections()
}

// mayReplay reports whether net/http could re-send req, a request that
// changes something, on a failed reused connection: it has a GetBody, or
// no body (then, with an Idempotency-Key header, it is "replayable" to
// Go). This is wider than Request.isReplayable on purpose — the header
// names and their case do not matter here — so that a change to Go's list
// cannot open a hole. Safe reads may be re-sent and go over the pool.
func mayReplay(req *http.Request) bool {
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return false
	}
	return req.GetBody != nil || req.Body == nil || req.Body == http.NoBody
}
