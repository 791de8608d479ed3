package web

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// connLimiter counts a server's open connections and knows which of them
// are idle (accepted but no request started, or between keep-alive
// requests) and which are reading a request body: those may be closed to
// admit a new one at the cap, the idle first.
type connLimiter struct {
	max     int
	freed   chan struct{} // a connection closed or turned idle
	evicted atomic.Int64
	shed    atomic.Int64

	mu      sync.Mutex
	open    int
	idle    map[*limitedConn]time.Time // since when
	reading map[*limitedConn]time.Time // reading a request body, since when
}

func newConnLimiter(max int) *connLimiter {
	return &connLimiter{max: max, freed: make(chan struct{}, 1),
		idle: map[*limitedConn]time.Time{}, reading: map[*limitedConn]time.Time{}}
}

// readingBody records that c started (since non-zero) or ended reading a
// request body.
func (l *connLimiter) readingBody(c *limitedConn, since time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if since.IsZero() || c.closed {
		delete(l.reading, c)
		return
	}
	l.reading[c] = since
}

// oldest returns the connection of m that has been there the longest.
func oldest(m map[*limitedConn]time.Time) *limitedConn {
	var (
		victim *limitedConn
		since  time.Time
	)
	for lc, at := range m {
		if victim == nil || at.Before(since) {
			victim, since = lc, at
		}
	}
	return victim
}

func (l *connLimiter) openConns() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

func (l *connLimiter) signal() {
	select {
	case l.freed <- struct{}{}:
	default:
	}
}

// admit takes c under the cap. At the cap it closes the longest-idle
// connection or, with none idle, the one that has been reading a request
// body the longest: at the cap those are a flood of slow bodies, and a
// real client sends its body within moments. It returns nil when every
// connection is busy with a request whose body has been read.
func (l *connLimiter) admit(c net.Conn) *limitedConn {
	for {
		l.mu.Lock()
		if l.open < l.max {
			l.open++
			lc := &limitedConn{Conn: c, l: l}
			l.idle[lc] = time.Now() // idle until its first request byte
			l.mu.Unlock()
			return lc
		}
		victim, counter := oldest(l.idle), &l.evicted
		if victim == nil {
			victim, counter = oldest(l.reading), &l.shed
		}
		l.mu.Unlock()
		if victim == nil {
			return nil
		}
		victim.Close()
		counter.Add(1)
	}
}

// track is the http.Server's ConnState hook.
func (l *connLimiter) track(c net.Conn, state http.ConnState) {
	lc, ok := c.(*limitedConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if lc.closed {
		return
	}
	switch state {
	case http.StateIdle:
		l.idle[lc] = time.Now()
		defer l.signal()
	case http.StateActive, http.StateHijacked, http.StateClosed:
		delete(l.idle, lc)
	}
}

func (l *connLimiter) listener(ln net.Listener) net.Listener {
	return &limitedListener{Listener: ln, l: l, done: make(chan struct{})}
}

// limitedListener admits accepted connections under the cap; at the cap
// with nothing idle it stops accepting, leaving newcomers in the kernel's
// listen queue until a connection closes or turns idle.
type limitedListener struct {
	net.Listener
	l    *connLimiter
	done chan struct{}
	once sync.Once
}

func (ll *limitedListener) Accept() (net.Conn, error) {
	c, err := ll.Listener.Accept()
	if err != nil {
		return nil, err
	}
	for {
		if lc := ll.l.admit(c); lc != nil {
			return lc, nil
		}
		select {
		case <-ll.l.freed:
		case <-ll.done:
			c.Close()
			return nil, net.ErrClosed
		}
	}
}

func (ll *limitedListener) Close() error {
	ll.once.Do(func() { close(ll.done) })
	return ll.Listener.Close()
}

// limitedConn gives its place back once, when closed by either side.
type limitedConn struct {
	net.Conn
	l      *connLimiter
	closed bool // guarded by l.mu
}

func (c *limitedConn) Close() error {
	c.l.mu.Lock()
	first := !c.closed
	if first {
		c.closed = true
		c.l.open--
		delete(c.l.idle, c)
		delete(c.l.reading, c)
	}
	c.l.mu.Unlock()
	if first {
		c.l.signal()
	}
	return c.Conn.Close()
}
