package drill

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"

	"settle/target"
)

// faults wraps settle's own transport to a target and injects faults on
// settle's side of the connection, so that a drill works against any
// target, a vendor's sandbox included:
//   - drop: a send (any non-GET request) reaches the target and its
//     response is read in full, then discarded, and the client sees the
//     connection close unanswered: "server committed, response lost";
//   - lag: a lookup (GET) reaches the target and its answer is replaced
//     with an empty result list (404 for a lookup whose body is the one
//     result): the target's search has not caught up yet.
//
// It counts what it let through. It never retries or sends anything twice.
type faults struct {
	next http.RoundTripper
	c    *target.Contract

	drop, lag     atomic.Bool
	sends         atomic.Int64 // non-GET requests passed on
	lookups       atomic.Int64 // GET requests passed on
	dropped, lags atomic.Int64 // responses discarded, lookups answered empty
}

// errResponseLost is what the client sees for a dropped response: the
// connection closed without one, which it reports as such.
var errResponseLost = fmt.Errorf("drill: response discarded after it was read: %w", io.ErrUnexpectedEOF)

func (f *faults) RoundTrip(req *http.Request) (*http.Response, error) {
	get := req.Method == http.MethodGet
	if get {
		f.lookups.Add(1)
	} else {
		f.sends.Add(1)
	}
	resp, err := f.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	switch {
	case !get && f.drop.Load():
		// Read it all, so the target finished the request, then lose it.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4*target.MaxResponseBytes))
		resp.Body.Close()
		f.dropped.Add(1)
		return nil, errResponseLost
	case get && f.lag.Load():
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4*target.MaxResponseBytes))
		resp.Body.Close()
		f.lags.Add(1)
		return f.empty(req), nil
	}
	return resp, nil
}

// empty is a lookup answer that finds nothing, in the contract's shape.
func (f *faults) empty(req *http.Request) *http.Response {
	status, body := http.StatusOK, "[]"
	if path := f.c.Lookup.ResultsField; path != "" {
		for _, seg := range reverse(strings.Split(path, ".")) {
			body = fmt.Sprintf("{%q:%s}", seg, body)
		}
	} else {
		status, body = http.StatusNotFound, `{}`
	}
	return &http.Response{
		Status: http.StatusText(status), StatusCode: status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"application/json"}},
		Body:    io.NopCloser(bytes.NewReader([]byte(body))),
		Request: req, ContentLength: int64(len(body)),
	}
}

func reverse(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}
