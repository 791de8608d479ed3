package main

import (
	"fmt"
	"log/slog"
	"time"

	"settle/web"
)

// fdReserve is how many of the open-file limit --max-conns leaves for
// everything else the process opens: the store's connections and files,
// outbound sends to targets, the metrics listener and its scrapes.
const fdReserve = 256

// metricsConns caps connections to --metrics-addr: one scraper needs one.
const metricsConns = 64

// httpOptions are the HTTP server's limits as settle serve takes them.
type httpOptions struct {
	ReadHeaderTimeout time.Duration `name:"read-header-timeout" default:"${read_header_timeout}" help:"time to read a request's header; also how long a new connection may stay silent"`
	ReadTimeout       time.Duration `name:"read-timeout" default:"${read_timeout}" help:"time to read a whole request, body included"`
	BodyTimeout       time.Duration `name:"body-timeout" default:"${body_timeout}" help:"time to read each 64 KiB of a request body; a slower body is cut off, and at --max-conns the slowest is shed first"`
	WriteTimeout      time.Duration `name:"write-timeout" default:"${write_timeout}" help:"time from the end of a request's header to the end of its response; must exceed --read-timeout"`
	IdleTimeout       time.Duration `name:"idle-timeout" default:"${idle_timeout}" help:"how long a keep-alive connection may wait for its next request"`
	MaxHeaderBytes    int           `name:"max-header-bytes" default:"${max_header_bytes}" help:"largest request header in bytes (431 beyond it)"`
	MaxConns          int           `name:"max-conns" default:"${max_conns}" help:"most open client connections; idle ones are closed to admit new ones at the cap; lowered at start to the open-file limit less ${fd_reserve}"`
}

// limits are the options as the web package takes them, checked: limits
// that would disable themselves are usage errors.
func (o httpOptions) limits() (web.ServerLimits, error) {
	l := web.ServerLimits{ReadHeaderTimeout: o.ReadHeaderTimeout, ReadTimeout: o.ReadTimeout, BodyTimeout: o.BodyTimeout,
		WriteTimeout: o.WriteTimeout, IdleTimeout: o.IdleTimeout, MaxHeaderBytes: o.MaxHeaderBytes, MaxConns: o.MaxConns}
	for _, d := range []struct {
		name string
		v    any
		ok   bool
	}{
		{"read-header-timeout", l.ReadHeaderTimeout, l.ReadHeaderTimeout > 0},
		{"read-timeout", l.ReadTimeout, l.ReadTimeout > 0},
		{"body-timeout", l.BodyTimeout, l.BodyTimeout > 0},
		{"write-timeout", l.WriteTimeout, l.WriteTimeout > 0},
		{"idle-timeout", l.IdleTimeout, l.IdleTimeout > 0},
	} {
		if !d.ok {
			return l, usagef("--%s must be a positive duration, got %v", d.name, d.v)
		}
	}
	switch {
	case l.WriteTimeout <= l.ReadTimeout:
		return l, usagef("--write-timeout (%s) must exceed --read-timeout (%s): it starts before the body is read", l.WriteTimeout, l.ReadTimeout)
	case l.MaxHeaderBytes < 1024:
		return l, usagef("--max-header-bytes must be at least 1024, got %d", l.MaxHeaderBytes)
	case l.MaxConns < 1:
		return l, usagef("--max-conns must be at least 1, got %d", l.MaxConns)
	}
	return l, nil
}

// fitConns lowers MaxConns to what the open-file limit allows, leaving
// fdReserve descriptors for everything else: a server whose client
// connections took every descriptor could no longer reach its database or
// send to a target.
func fitConns(l web.ServerLimits, log *slog.Logger) (web.ServerLimits, error) {
	limit, known := openFileLimit()
	if !known || limit >= uint64(l.MaxConns)+fdReserve {
		return l, nil
	}
	if limit < fdReserve+16 {
		return l, fmt.Errorf("the open-file limit (%d) leaves no room for client connections; raise it (ulimit -n) above %d", limit, fdReserve+16)
	}
	room := int(limit - fdReserve)
	log.Warn("--max-conns lowered to fit the open-file limit", "max_conns", room, "requested", l.MaxConns,
		"open_file_limit", limit, "reserved", fdReserve)
	l.MaxConns = room
	return l, nil
}

// apiLimits are the client API's limits as settle serve takes them.
type apiLimits struct {
	rate       float64 // per token per second; 0: unlimited
	burst      int
	maxCreates int
	perTenant  int // creates one tenant may have in progress; 0: the default share
}

// rateLimit is rate as web.Config wants it (negative: unlimited).
func (a apiLimits) rateLimit() float64 {
	if a.rate == 0 {
		return -1
	}
	return a.rate
}

// apiOptions are the client API's limits as settle serve takes them.
type apiOptions struct {
	RateLimit           float64 `name:"rate-limit" default:"${rate_limit}" help:"API requests per second each API token without its own rate (settle token create --rate) may send on average (429 beyond); 0: unlimited"`
	RateBurst           int     `name:"rate-burst" default:"${rate_burst}" help:"API requests each API token without its own rate may send at once"`
	MaxCreates          int     `name:"max-creates" default:"${max_creates}" help:"creates in progress in this replica; one more waits ${create_wait} for a slot, then gets 503"`
	MaxCreatesPerTenant int     `name:"max-creates-per-tenant" default:"0" help:"creates one tenant may have in progress, at most --max-creates; 0: all but a quarter of --max-creates (at least one), so one tenant never holds every slot"`
}

// limits are the options checked.
func (o apiOptions) limits() (apiLimits, error) {
	a := apiLimits{rate: o.RateLimit, burst: o.RateBurst, maxCreates: o.MaxCreates, perTenant: o.MaxCreatesPerTenant}
	switch {
	case a.rate < 0:
		return a, usagef("--rate-limit must be a number of requests per second, 0 for none, got %v", a.rate)
	case a.burst < 1:
		return a, usagef("--rate-burst must be at least 1, got %d", a.burst)
	case a.maxCreates < 1:
		return a, usagef("--max-creates must be at least 1, got %d", a.maxCreates)
	case a.perTenant < 0 || a.perTenant > a.maxCreates:
		return a, usagef("--max-creates-per-tenant must be from 0 (the default share) to --max-creates (%d), got %d", a.maxCreates, a.perTenant)
	}
	return a, nil
}
