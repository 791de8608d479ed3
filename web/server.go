// Package web is settle's HTTP surface: health, the client API, the console
// and the webhook receiver, on one Echo server. Handlers hold no business
// logic: they decode, call the ledger and encode.
package web

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/time/rate"

	"settle/ledger"
	"settle/resolve"
	"settle/target"
)

// DefaultBodyLimit bounds API request bodies unless Config says otherwise:
// 64 KiB holds real payloads (a charge, a resource spec) many times over,
// while keeping what 16 concurrent creates can hold in memory small (see
// docs/performance.md).
const DefaultBodyLimit = 64 << 10

// Target is what the API needs to know about a target to register an
// operation for it.
type Target struct {
	RetryWindow time.Duration // documented idempotency-key retention; 0 = none
	Deadline    time.Duration // default operation deadline; 0 = none
	Owner       string        // owning team, named in plain-language status
	// Bind writes settle's references into the payload before hashing
	// (see ledger.NewOperation.Bind); nil when the contract names none.
	Bind func(payload []byte, remoteKey, tenant string) ([]byte, error)
}

// Targets resolves target names; an unknown name is refused at creation.
type Targets interface {
	Target(name string) (Target, bool)
}

// Config holds what the server needs; cmd/settle fills it.
type Config struct {
	Store     Store
	Targets   Targets
	Contracts Contracts // nil: no webhook receiver
	// WebhookSecrets verify deliveries (read from the environment at
	// start-up).
	WebhookSecrets map[string][]byte
	// Client asks targets on a person's behalf (the console's checks of
	// "confirm succeeded" and supersede), with the deployment's credentials
	// and tenant parameters. nil: a client with neither, so a target that
	// needs them is not asked and the check says why.
	Client *target.Client
	Logger *slog.Logger
	Now    func() time.Time // nil means time.Now
	// Metrics is served at /metrics (Prometheus text format); nil serves
	// an empty registry.
	Metrics *prometheus.Registry
	// MetricsElsewhere leaves /metrics out of this handler: the caller
	// serves Metrics(reg) on a listener of its own.
	MetricsElsewhere bool

	// Limits bounds what API requests and webhook deliveries may hold
	// at once; the zero Limits is the defaults.
	Limits Limits

	// The console. SignIn nil means no console at all: only the API,
	// webhooks and operational endpoints are served.
	SignIn SignIn
	// ReadOnly refuses every console write (sign-in and sign-out aside).
	ReadOnly bool
	// InsecureCookies drops the Secure flag from the console's cookies,
	// for plain HTTP on loopback only (cmd/settle checks the address).
	InsecureCookies bool
	// CallbackPolicy is where the console lets an admin point a callback
	// (settle serve --callbacks-allow-*); the zero policy is production's.
	CallbackPolicy ledger.CallbackPolicy
	// Retention is the deployment's retention rule, and MaxDrillAge the
	// age past which a drill no longer counts (0: gonogo's default), as
	// `settle gonogo` weighs them on the Targets pages' go/no-go gate.
	Retention   ledger.RetentionPolicy
	MaxDrillAge time.Duration
	// LiveEvery is how often an open list or operation page refreshes
	// itself; 0 means DefaultLiveEvery.
	LiveEvery time.Duration
}

// Limits bounds what requests may hold at once; a zero field means its
// default.
type Limits struct {
	BodyLimit int64 // API request body, bytes; 0 means DefaultBodyLimit

	// RateLimit is each API token's sustained requests per second, with
	// bursts of RateBurst; 0 means DefaultRateLimit (and DefaultRateBurst),
	// negative means unlimited.
	RateLimit float64
	RateBurst int
	// MaxCreates caps creates in progress; one more waits up to CreateWait
	// for a slot, then is refused with 503. 0 means the defaults.
	// MaxCreatesPerTenant caps those of one tenant (at most MaxCreates);
	// 0 leaves a quarter of MaxCreates, at least one, to other tenants.
	MaxCreates          int
	MaxCreatesPerTenant int
	CreateWait          time.Duration

	// MaxWebhookReads and WebhookReadBytes cap webhook bodies read or
	// held at once, by count and by bytes reserved (Content-Length, or
	// the target's limit); one more sheds the oldest bodies still
	// arriving, or waits up to WebhookWait, then is refused with 503.
	// WebhookBodyTimeout is how long a body may take to arrive whole.
	MaxWebhookReads    int
	WebhookReadBytes   int64
	WebhookWait        time.Duration
	WebhookBodyTimeout time.Duration
}

// Contracts resolves target names to contracts (*target.Set does).
type Contracts interface {
	Get(name string) (*target.Contract, bool)
}

// server is what wiring the Echo instance needs: the error handler's log
// and shed log, readiness's store ping, the console's sign-in and the
// pages bundle its authorization and error pages use. Each feature's
// handlers are a struct of their own (api, webhooks, features).
type server struct {
	pages
	store interface {
		Ping(ctx context.Context) error
	}
	shed   *sheddingLog // refusals a flood drives, rate-limited
	outage *sheddingLog // refusals while the database is unavailable, rate-limited
	signIn SignIn       // nil: no console
	// tokens answers the API's token look-ups from memory for
	// ledger.TokenCacheTTL; the console revokes through it, so a
	// revocation here refuses the token at once.
	tokens *ledger.TokenCache
}

// New returns the configured Echo server.
func New(cfg Config) *echo.Echo {
	s := &server{store: cfg.Store, signIn: cfg.SignIn,
		pages: pages{log: cfg.Logger, now: cfg.Now, readOnly: cfg.ReadOnly, liveEvery: cfg.LiveEvery}}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.liveEvery <= 0 {
		s.liveEvery = DefaultLiveEvery
	}
	if cfg.Store != nil {
		// Counting needs neither contracts nor a client: no target is asked.
		s.awaits = &awaiting{resolve: resolve.New(cfg.Store, nil, nil, s.now), quarantine: cfg.Store}
	}
	s.shed = newSheddingLog(s.log)
	s.outage = &sheddingLog{log: s.log, limit: rate.NewLimiter(rate.Every(5*time.Second), 1)}
	if cfg.Store != nil {
		s.tokens = ledger.NewTokenCache(cfg.Store, s.now)
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.errorHandler
	e.Use(headers)
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{
		LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
			s.log.Error("panic", "route", c.Path(), "err", err, "stack", string(stack),
				"request_id", c.Response().Header().Get(echo.HeaderXRequestID))
			return err
		},
	}))
	e.Use(requestID)
	reg := cfg.Metrics
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	// Outside requestLog, which hands a handler's error to the error
	// handler: the status observed is the one written.
	e.Use(httpDurations(reg))
	e.Use(requestLog(s.log))
	if s.signIn != nil {
		e.Use(stamp)
		if cfg.ReadOnly {
			e.Use(readOnly)
		}
		e.Use(csrf(cfg.InsecureCookies, s.signIn))
	}
	e.GET("/healthz", func(c echo.Context) error {
		return c.String(http.StatusOK, "ok\n")
	})
	// Ready when the store answers: a load balancer stops sending API and
	// webhook traffic to a replica that cannot record it.
	e.GET("/readyz", func(c echo.Context) error {
		ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
		defer cancel()
		if err := s.store.Ping(ctx); err != nil {
			s.log.Warn("not ready: store unreachable", "err", err, "request_id", c.Response().Header().Get(echo.HeaderXRequestID))
			return c.String(http.StatusServiceUnavailable, "store unreachable\n")
		}
		// A console whose sign-in is down (its OpenID provider cannot be
		// reached) is degraded, not unready: the API and the webhooks
		// work, and taking the replica out would stop them too.
		if h, ok := s.signIn.(interface{ Unavailable() error }); ok && h.Unavailable() != nil {
			return c.String(http.StatusOK, "ready; console degraded: sign-in unavailable\n")
		}
		return c.String(http.StatusOK, "ready\n")
	})
	if !cfg.MetricsElsewhere {
		e.GET("/metrics", echo.WrapHandler(promhttp.HandlerFor(reg, promhttp.HandlerOpts{})))
	}
	if cfg.Contracts != nil {
		wh := &webhooks{contracts: cfg.Contracts, secrets: cfg.WebhookSecrets, store: cfg.Store, now: s.now,
			count: newWebhookCounter(reg), shed: s.shed,
			reads: newWebhookBudget(positive(cfg.Limits.WebhookReadBytes, DefaultWebhookReadBytes),
				positive(cfg.Limits.MaxWebhookReads, DefaultMaxWebhookReads), positive(cfg.Limits.WebhookWait, DefaultWebhookWait)),
			bodyTimeout: positive(cfg.Limits.WebhookBodyTimeout, DefaultWebhookBodyTimeout)}
		e.POST("/webhooks/:target", wh.receiveWebhook)
	}
	a := &api{store: cfg.Store, tokens: s.tokens, targets: cfg.Targets, now: s.now, bodyLimit: positive(cfg.Limits.BodyLimit, DefaultBodyLimit),
		rates:   newTokenRates(cfg.Limits.RateLimit, cfg.Limits.RateBurst, s.now),
		creates: newCreateSlots(cfg.Limits.MaxCreates, cfg.Limits.MaxCreatesPerTenant, cfg.Limits.CreateWait)}
	a.routes(e)
	if s.signIn != nil {
		s.routesConsole(e, cfg)
	}
	return e
}

// positive returns v, or def when v is not positive.
func positive[T int | int64 | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

// requestLog writes one line per request: method, route pattern (never the
// raw path, which can carry identifiers), status and duration. Bodies and
// headers are never logged.
func requestLog(log *slog.Logger) echo.MiddlewareFunc {
	return middleware.RequestLoggerWithConfig(middleware.RequestLoggerConfig{
		LogStatus: true, LogMethod: true, LogRoutePath: true, LogLatency: true, LogRequestID: true,
		HandleError: true,
		LogValuesFunc: func(c echo.Context, v middleware.RequestLoggerValues) error {
			// Load balancers probe every few seconds: their lines would
			// drown the rest, so they are DEBUG (a failing /readyz logs
			// its cause at WARN).
			level := slog.LevelInfo
			if v.RoutePath == "/healthz" || v.RoutePath == "/readyz" {
				level = slog.LevelDebug
			}
			log.Log(c.Request().Context(), level, "request", "method", v.Method, "route", v.RoutePath, "status", v.Status,
				"duration_ms", v.Latency.Milliseconds(), "request_id", v.RequestID)
			return nil
		},
	})
}
