package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"

	"settle/web"
)

// fdReserve is how many of the open-file limit --max-conns leaves for
// everything else the process opens: the store's connections and files,
// outbound sends to targets, the metrics listener and its scrapes.
const fdReserve = 256

// metricsConns caps connections to --metrics-addr: one scraper needs one.
const metricsConns = 64

// httpFlags registers the HTTP server's limits.
func httpFlags(fs *flag.FlagSet, l *web.ServerLimits) {
	d := web.DefaultServerLimits
	fs.DurationVar(&l.ReadHeaderTimeout, "read-header-timeout", d.ReadHeaderTimeout,
		"time to read a request's header; also how long a new connection may stay silent")
	fs.DurationVar(&l.ReadTimeout, "read-timeout", d.ReadTimeout,
		"time to read a whole request, body included")
	fs.DurationVar(&l.WriteTimeout, "write-timeout", d.WriteTimeout,
		"time from the end of a request's header to the end of its response; must exceed --read-timeout")
	fs.DurationVar(&l.IdleTimeout, "idle-timeout", d.IdleTimeout,
		"how long a keep-alive connection may wait for its next request")
	fs.IntVar(&l.MaxHeaderBytes, "max-header-bytes", d.MaxHeaderBytes,
		"largest request header in bytes (431 beyond it)")
	fs.IntVar(&l.MaxConns, "max-conns", d.MaxConns,
		fmt.Sprintf("most open client connections; idle ones are closed to admit new ones at the cap; lowered at start to the open-file limit less %d", fdReserve))
}

// checkHTTPFlags refuses limits that would disable themselves.
func checkHTTPFlags(l web.ServerLimits, stderr io.Writer) error {
	bad := func(format string, args ...any) error {
		fmt.Fprintf(stderr, "settle serve: "+format+"\n", args...)
		return errUsage
	}
	for _, d := range []struct {
		name string
		v    any
		ok   bool
	}{
		{"read-header-timeout", l.ReadHeaderTimeout, l.ReadHeaderTimeout > 0},
		{"read-timeout", l.ReadTimeout, l.ReadTimeout > 0},
		{"write-timeout", l.WriteTimeout, l.WriteTimeout > 0},
		{"idle-timeout", l.IdleTimeout, l.IdleTimeout > 0},
	} {
		if !d.ok {
			return bad("--%s must be a positive duration, got %v", d.name, d.v)
		}
	}
	switch {
	case l.WriteTimeout <= l.ReadTimeout:
		return bad("--write-timeout (%s) must exceed --read-timeout (%s): it starts before the body is read", l.WriteTimeout, l.ReadTimeout)
	case l.MaxHeaderBytes < 1024:
		return bad("--max-header-bytes must be at least 1024, got %d", l.MaxHeaderBytes)
	case l.MaxConns < 1:
		return bad("--max-conns must be at least 1, got %d", l.MaxConns)
	}
	return nil
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

func apiFlags(fs *flag.FlagSet, a *apiLimits) {
	fs.Float64Var(&a.rate, "rate-limit", web.DefaultRateLimit,
		"API requests per second each API token may send on average (429 beyond); 0: unlimited")
	fs.IntVar(&a.burst, "rate-burst", web.DefaultRateBurst, "API requests each API token may send at once")
	fs.IntVar(&a.maxCreates, "max-creates", web.DefaultMaxCreates,
		fmt.Sprintf("creates in progress in this replica; one more waits %s for a slot, then gets 503", web.DefaultCreateWait))
	fs.IntVar(&a.perTenant, "max-creates-per-tenant", 0,
		"creates one tenant may have in progress, at most --max-creates; 0: all but a quarter of --max-creates (at least one), so one tenant never holds every slot")
}

func checkAPIFlags(a apiLimits, stderr io.Writer) error {
	var msg string
	switch {
	case a.rate < 0:
		msg = fmt.Sprintf("--rate-limit must be a number of requests per second, 0 for none, got %v", a.rate)
	case a.burst < 1:
		msg = fmt.Sprintf("--rate-burst must be at least 1, got %d", a.burst)
	case a.maxCreates < 1:
		msg = fmt.Sprintf("--max-creates must be at least 1, got %d", a.maxCreates)
	case a.perTenant < 0 || a.perTenant > a.maxCreates:
		msg = fmt.Sprintf("--max-creates-per-tenant must be from 0 (the default share) to --max-creates (%d), got %d", a.maxCreates, a.perTenant)
	default:
		return nil
	}
	fmt.Fprintln(stderr, "settle serve: "+msg)
	return errUsage
}
