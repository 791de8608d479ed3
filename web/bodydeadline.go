package web

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// bodyUnit is the amount of request body each BodyTimeout pays for.
const bodyUnit = 64 << 10

// connKey is where the server's ConnContext leaves a request's connection.
type connKey struct{}

// withConn is the http.Server's ConnContext hook.
func withConn(ctx context.Context, c net.Conn) context.Context {
	if lc, ok := c.(*limitedConn); ok {
		return context.WithValue(ctx, connKey{}, lc)
	}
	return ctx
}

// paceBodies bounds the time to read a request body by its size: every
// BodyTimeout must bring another 64 KiB, or the read fails (and the
// connection closes). ReadTimeout still caps the whole request. A client
// trickling a body thus holds its connection seconds, not ReadTimeout,
// and while it does its connection may be shed to admit a new one at the
// cap (connLimiter.admit).
func paceBodies(next http.Handler, perUnit, total time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		pb := &pacedBody{body: r.Body, rc: http.NewResponseController(w), perUnit: perUnit,
			cap: time.Now().Add(total)}
		if lc, ok := r.Context().Value(connKey{}).(*limitedConn); ok {
			// Sheddable from the start: a request that holds its
			// connection before its body is read is as slow as one
			// trickling it.
			pb.conn = lc
			lc.l.readingBody(lc, time.Now())
		}
		defer pb.done(false)
		r.Body = pb
		next.ServeHTTP(w, r)
	})
}

// pacedBody moves the connection's read deadline on as the body arrives.
type pacedBody struct {
	body    io.ReadCloser
	rc      *http.ResponseController
	conn    *limitedConn // nil: not under a connLimiter
	start   time.Time    // the first Read: the pace counts from there
	perUnit time.Duration
	cap     time.Time // the ReadTimeout's end

	mu    sync.Mutex
	read  int64
	units int64 // units the deadline pays for, the first included
	ended bool
}

// extend sets the read deadline for the units read so far plus one.
// Called with mu held.
func (b *pacedBody) extend() {
	b.units = b.read/bodyUnit + 1
	d := b.start.Add(time.Duration(b.units) * b.perUnit)
	if d.After(b.cap) {
		d = b.cap
	}
	// An error means the connection cannot set deadlines (HTTP/2, a test
	// recorder): ReadTimeout alone then bounds the body.
	_ = b.rc.SetReadDeadline(d)
}

func (b *pacedBody) Read(p []byte) (int, error) {
	b.begin()
	n, err := b.body.Read(p)
	b.mu.Lock()
	b.read += int64(n)
	if err == nil && b.read/bodyUnit+1 > b.units {
		b.extend()
	}
	b.mu.Unlock()
	if err != nil {
		b.done(errors.Is(err, io.EOF))
	}
	return n, err
}

// begin starts the pace at the first Read, not when the handler starts:
// what a handler does before it reads (authenticating the token against a
// busy store) is settle's time, not the client's, and must not count
// against the client's body. Until then ReadTimeout alone bounds it.
func (b *pacedBody) begin() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.start.IsZero() || b.ended {
		return
	}
	b.start = time.Now()
	b.extend()
}

func (b *pacedBody) Close() error {
	b.done(false)
	return b.body.Close()
}

// done ends the body's reading: the connection is no longer a slow body
// the limiter may shed. A body read to its end puts the read deadline back
// to ReadTimeout's: a handler that works on past the paced deadline (a
// create waiting on the store) must not see net/http's background read
// time out and cancel its request. A body cut short keeps the paced
// deadline, which then bounds net/http discarding what is left of it.
func (b *pacedBody) done(complete bool) {
	b.mu.Lock()
	first, begun := !b.ended, !b.start.IsZero()
	b.ended = true
	b.mu.Unlock()
	if !first {
		return
	}
	switch {
	case complete:
		_ = b.rc.SetReadDeadline(b.cap)
	case !begun:
		// Never read: net/http discards the body after the handler,
		// and that too must keep the pace.
		_ = b.rc.SetReadDeadline(time.Now().Add(b.perUnit))
	}
	if b.conn != nil {
		b.conn.l.readingBody(b.conn, time.Time{})
	}
}
