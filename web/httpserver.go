package web

import (
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// ServerLimits bound what one client, or many, can hold of the server.
// Zero fields take the value of DefaultServerLimits.
type ServerLimits struct {
	// ReadHeaderTimeout bounds reading a request's header; it is also how
	// long a new connection may stay silent.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included, however
	// steadily it trickles in.
	ReadTimeout time.Duration
	// BodyTimeout bounds reading each 64 KiB of a request body: a body
	// that does not bring another 64 KiB every BodyTimeout is cut off
	// (within ReadTimeout in all).
	BodyTimeout time.Duration
	// WriteTimeout bounds a request from the end of its header to the end
	// of its response; it must exceed ReadTimeout plus the slowest handler
	// (a create waits up to 30 s on the store).
	WriteTimeout time.Duration
	// IdleTimeout is how long a keep-alive connection may wait for its
	// next request.
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds a request's header (431 beyond it).
	MaxHeaderBytes int
	// MaxConns caps open client connections; see HTTPServer.
	MaxConns int
}

// DefaultServerLimits are settle serve's defaults.
var DefaultServerLimits = ServerLimits{
	ReadHeaderTimeout: 10 * time.Second,
	ReadTimeout:       30 * time.Second,
	BodyTimeout:       5 * time.Second,
	WriteTimeout:      60 * time.Second,
	IdleTimeout:       60 * time.Second,
	MaxHeaderBytes:    32 << 10,
	MaxConns:          4096,
}

func (l ServerLimits) withDefaults() ServerLimits {
	d := DefaultServerLimits
	for _, f := range []struct{ v, def *time.Duration }{
		{&l.ReadHeaderTimeout, &d.ReadHeaderTimeout}, {&l.ReadTimeout, &d.ReadTimeout}, {&l.BodyTimeout, &d.BodyTimeout},
		{&l.WriteTimeout, &d.WriteTimeout}, {&l.IdleTimeout, &d.IdleTimeout},
	} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = d.MaxHeaderBytes
	}
	if l.MaxConns <= 0 {
		l.MaxConns = d.MaxConns
	}
	return l
}

// HTTPServer is the http.Server settle serves with: every timeout set,
// headers bounded, and at most MaxConns client connections open.
//
// The cap is what keeps a flood of idle sockets from exhausting the
// process's file descriptors, which the store's connections, outbound
// sends to targets and webhook senders need too. It does not lock
// everyone else out: a connection that has not started a request (new and
// silent, or idle between keep-alive requests) is evictable, and a new
// connection arriving at the cap closes the one idle the longest. With
// none idle, it closes the one that has been reading a request body the
// longest, so a flood of trickled bodies cannot hold the cap either;
// bodies must also keep a pace (BodyTimeout per 64 KiB). Only when every
// connection is busy with a request past its body does a new one wait, in
// the kernel's listen queue, for one to finish. Silent and idle
// connections also end on their own after ReadHeaderTimeout and
// IdleTimeout.
type HTTPServer struct {
	*http.Server
	conns *connLimiter
}

// NewHTTPServer returns the server for h under limits.
func NewHTTPServer(h http.Handler, limits ServerLimits) *HTTPServer {
	l := limits.withDefaults()
	conns := newConnLimiter(l.MaxConns)
	return &HTTPServer{conns: conns, Server: &http.Server{
		Handler:           paceBodies(h, l.BodyTimeout, l.ReadTimeout),
		ConnContext:       withConn,
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		ReadTimeout:       l.ReadTimeout,
		WriteTimeout:      l.WriteTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    l.MaxHeaderBytes,
		ConnState:         conns.track,
	}}
}

// SetErrorLog routes the server's own messages (accept errors, TLS and
// protocol errors from clients) to log at WARN.
func (s *HTTPServer) SetErrorLog(l *slog.Logger) {
	s.ErrorLog = slog.NewLogLogger(l.Handler(), slog.LevelWarn)
}

// Serve accepts connections on ln, within the cap, until Shutdown or
// Close.
func (s *HTTPServer) Serve(ln net.Listener) error {
	return s.Server.Serve(s.conns.listener(ln))
}

// OpenConns is the number of client connections open now.
func (s *HTTPServer) OpenConns() int { return s.conns.openConns() }

// Evicted is the number of idle connections closed so far to admit new
// ones at the cap.
func (s *HTTPServer) Evicted() int64 { return s.conns.evicted.Load() }

// Shed is the number of connections closed so far, while reading a
// request body, to admit new ones at the cap.
func (s *HTTPServer) Shed() int64 { return s.conns.shed.Load() }

// Register exports the connection count, the evictions and the slow
// bodies shed to reg.
func (s *HTTPServer) Register(reg prometheus.Registerer, name string) {
	labels := prometheus.Labels{"listener": name}
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "settle_http_open_connections",
			Help: "Client connections open now, by listener.", ConstLabels: labels},
			func() float64 { return float64(s.OpenConns()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "settle_http_evicted_connections_total",
			Help: "Idle client connections closed to admit a new one at the connection cap, by listener.", ConstLabels: labels},
			func() float64 { return float64(s.Evicted()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "settle_http_shed_slow_bodies_total",
			Help: "Connections closed while reading a request body, to admit a new one at the connection cap with none idle, by listener.", ConstLabels: labels},
			func() float64 { return float64(s.Shed()) }),
	)
}
