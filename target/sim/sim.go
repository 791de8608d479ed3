// Package sim is a simulated payment provider for settle's tests and drills.
//
// It is a real HTTP server that creates "charges", keeps an exact in-memory
// record of every object it created, and injects the failures that make an
// outbound call's outcome ambiguous: responses failed or dropped after the
// object was committed, connection resets, slow responses, lookups that lag
// behind commits, and idempotency keys forgotten after their retention
// window. Tests count remote effects with Objects or GET /_sim/objects.
// Server.Contract describes a running instance as a settle target contract,
// citing the simulator's own documentation at GET /_sim/docs.
//
// Config.Flavor picks the API the simulator speaks. The default is settle's
// own charges API with capability classes A–D; FlavorStripe speaks the parts
// of Stripe's PaymentIntents API that matter to settle (stripe.go): a secret
// key, form-encoded bodies, Stripe's idempotency rules, connected accounts,
// an eventually consistent search and Stripe-shaped errors.
//
// Times the simulator measures (the retention window, lookup lag, "created"
// stamps, webhook signatures) follow Config.Now so that tests can move them;
// delays it waits out (Latency, SlowDelay, AsyncDelay, webhook delays and
// backoff) are wall-clock time, so tests keep them short.
package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// Config describes the provider to simulate. The zero value of every field
// except Class (or, for FlavorStripe, APIKey) is usable; New fills in the
// documented defaults.
type Config struct {
	// Flavor is the API the simulator speaks: FlavorSettle ("", settle's
	// charges API in classes A–D) or FlavorStripe (Stripe's PaymentIntents).
	Flavor string
	// Class is the provider's capability class in settle's design: "A"
	// (idempotency keys honoured for Retention, plus lookup), "B" (lookup by
	// the client's reference), "C" (lookup plus If-Match conditional updates)
	// or "D" (no idempotency, no lookup, no preconditions). FlavorStripe has
	// no Class: it behaves as Stripe does, which is class A and B.
	Class string
	// APIKey is the secret key FlavorStripe accepts as "Authorization:
	// Bearer <key>" on every /v1 request; it is required there and refused
	// in FlavorSettle. The simulator never writes it anywhere.
	APIKey string
	// RequireAccount makes FlavorStripe refuse (400) requests without a
	// Stripe-Account header, so that a drill notices a client that forgot
	// to act for a connected account instead of charging the platform.
	RequireAccount bool
	// Addr is the address Start listens on; empty means 127.0.0.1:0.
	Addr string

	// Retention is how long a class A (or FlavorStripe) idempotency key is
	// honoured after its first use; afterwards a request with the same key
	// creates a new object, as real providers do. Zero means 24h.
	Retention time.Duration
	// MismatchStatus answers a class A request that reuses a key with a
	// different body. It must be a 4xx status; zero means 422. FlavorStripe
	// always answers 400, as Stripe does, and refuses a setting here.
	MismatchStatus int
	// ConflictOnConcurrent makes a class A request whose key is still being
	// executed by an earlier request fail with 409; otherwise it waits for
	// the earlier request and replays its answer. FlavorStripe ignores it
	// and always answers 409, as Stripe does.
	ConflictOnConcurrent bool
	// Latency is the processing time between accepting a create and
	// committing it. It widens the window in which the object is "still
	// executing", which is when concurrent same-key requests collide.
	Latency time.Duration

	// LookupLag is how long after commit an object becomes visible to
	// GET /v1/charges and GET /v1/charges/{id}, or in FlavorStripe to
	// GET /v1/payment_intents/search (retrieval by id sees it at once);
	// SetLookupLag changes it.
	LookupLag time.Duration
	// Async makes creates answer 202 with a pending object that succeeds
	// AsyncDelay later (zero means 1s). FlavorStripe refuses Async: there a
	// PaymentIntent confirmed with payment_method=pm_card_processing is
	// "processing" and succeeds AsyncDelay later.
	Async      bool
	AsyncDelay time.Duration

	// WebhookURL, when set, receives a signed charge.succeeded event for
	// every object that succeeds. WebhookSecret keys the signature (see
	// Sign) and is required with WebhookURL. FlavorStripe sends no webhooks
	// and refuses a WebhookURL.
	WebhookURL    string
	WebhookSecret string
	// WebhookDuplicates is the probability (0–1) that an event is delivered
	// a second time.
	WebhookDuplicates float64
	// WebhookReorder delays each delivery by a small random amount so that
	// events can arrive out of order.
	WebhookReorder bool

	// ReferenceField and TenantField are dot-separated paths into the
	// create body holding the client's reference and tenant. They default to
	// "metadata.settle_ref" and "metadata.settle_tenant". In FlavorStripe
	// they must be "metadata.<key>": a PaymentIntent keeps client data only
	// in metadata, and search finds it only there.
	ReferenceField string
	TenantField    string

	// Fault probabilities (0–1, summing to at most 1) applied to each create
	// request that no scripted fault claims; see Fault for what each does.
	DropAfterCommit  float64
	FailAfterCommit  float64
	FailBeforeCommit float64
	Slow             float64
	Reset            float64
	// SlowDelay is how long a Slow response is held back; zero means 2s.
	SlowDelay time.Duration

	// Seed makes fault and webhook randomness reproducible: the same seed
	// and the same sequence of requests draw the same faults.
	Seed uint64
	// Now is the simulator's clock; nil means time.Now. It is called from
	// many goroutines, so it must be safe for concurrent use.
	Now func() time.Time
}

// Defaults applied by New.
const (
	defaultRetention  = 24 * time.Hour
	defaultMismatch   = http.StatusUnprocessableEntity
	defaultAsyncDelay = time.Second
	defaultSlowDelay  = 2 * time.Second
	defaultRefField   = "metadata.settle_ref"
	defaultTenant     = "metadata.settle_tenant"
)

// withDefaults validates c and returns it with defaults filled in.
func (c Config) withDefaults() (Config, error) {
	switch c.Flavor {
	case FlavorSettle:
		if err := c.checkSettleFlavor(); err != nil {
			return c, err
		}
	case FlavorStripe:
		if err := c.checkStripeFlavor(); err != nil {
			return c, err
		}
	default:
		return c, fmt.Errorf("sim: flavor %q is not one of %q, %q", c.Flavor, FlavorSettle, FlavorStripe)
	}
	for _, d := range []struct {
		name string
		d    time.Duration
	}{
		{"Retention", c.Retention}, {"Latency", c.Latency}, {"LookupLag", c.LookupLag},
		{"AsyncDelay", c.AsyncDelay}, {"SlowDelay", c.SlowDelay},
	} {
		if d.d < 0 {
			return c, fmt.Errorf("sim: %s must not be negative, got %s", d.name, d.d)
		}
	}
	if c.MismatchStatus != 0 && (c.MismatchStatus < 400 || c.MismatchStatus > 499) {
		return c, fmt.Errorf("sim: MismatchStatus must be a 4xx status, got %d", c.MismatchStatus)
	}
	if c.WebhookURL != "" {
		u, err := url.Parse(c.WebhookURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return c, fmt.Errorf("sim: WebhookURL %q is not an absolute http(s) URL", c.WebhookURL)
		}
		if c.WebhookSecret == "" {
			return c, errors.New("sim: WebhookSecret is required when WebhookURL is set")
		}
	}
	if !isProbability(c.WebhookDuplicates) {
		return c, fmt.Errorf("sim: WebhookDuplicates must be within 0–1, got %v", c.WebhookDuplicates)
	}
	sum := 0.0
	for _, f := range c.faultOdds() {
		if !isProbability(f.p) {
			return c, fmt.Errorf("sim: %s probability must be within 0–1, got %v", f.fault, f.p)
		}
		sum += f.p
	}
	// One fault at most applies to a request, so the odds share one draw.
	if sum > 1+1e-9 {
		return c, fmt.Errorf("sim: fault probabilities sum to %v, more than 1", sum)
	}

	if c.Retention == 0 {
		c.Retention = defaultRetention
	}
	if c.MismatchStatus == 0 {
		c.MismatchStatus = defaultMismatch
	}
	if c.AsyncDelay == 0 {
		c.AsyncDelay = defaultAsyncDelay
	}
	if c.SlowDelay == 0 {
		c.SlowDelay = defaultSlowDelay
	}
	if c.ReferenceField == "" {
		c.ReferenceField = defaultRefField
	}
	if c.TenantField == "" {
		c.TenantField = defaultTenant
	}
	for _, f := range [][2]string{{"ReferenceField", c.ReferenceField}, {"TenantField", c.TenantField}} {
		segs := strings.Split(f[1], ".")
		if slices.Contains(segs, "") {
			return c, fmt.Errorf("sim: %s %q has an empty path segment", f[0], f[1])
		}
		if c.Flavor == FlavorStripe && (len(segs) != 2 || segs[0] != "metadata") {
			return c, fmt.Errorf("sim: %s %q must be metadata.<key> in the stripe flavor", f[0], f[1])
		}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c, nil
}

// checkSettleFlavor validates the settings of settle's own charges API.
func (c Config) checkSettleFlavor() error {
	switch c.Class {
	case "A", "B", "C", "D":
	default:
		return fmt.Errorf("sim: class %q is not one of A, B, C, D", c.Class)
	}
	if c.APIKey != "" || c.RequireAccount {
		return errors.New("sim: APIKey and RequireAccount apply only to the stripe flavor")
	}
	return nil
}

func isProbability(p float64) bool { return p >= 0 && p <= 1 && !math.IsNaN(p) }

// Sim is the simulated provider. It is an http.Handler; Start serves it on
// loopback. All methods are safe for concurrent use.
type Sim struct {
	cfg   Config
	mux   *http.ServeMux
	hooks *http.Client

	// ctx is cancelled by Close: it wakes sleeping handlers and stops
	// webhook deliveries and async completions.
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	closed   bool
	wg       sync.WaitGroup // handlers and background goroutines; Add only under mu while !closed
	rng      *rand.Rand
	script   []Fault
	lag      time.Duration
	requests int
	objects  []*record // creation order
	byID     map[string]*record
	keys     map[string]*keyEntry // class A idempotency keys; in FlavorStripe by account and key
}

// record is an object plus the bookkeeping that clients never see.
type record struct {
	obj       Object
	committed time.Time // by Config.Now; visibility is measured from here
	// intent holds a FlavorStripe PaymentIntent's create parameters, from
	// which its API representation is built; nil in FlavorSettle.
	intent *intentInput
}

// New returns a simulator for cfg, or an error naming the first invalid
// setting.
func New(cfg Config) (*Sim, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Sim{
		cfg:    cfg,
		hooks:  &http.Client{Timeout: 5 * time.Second, Transport: http.DefaultTransport.(*http.Transport).Clone()},
		ctx:    ctx,
		cancel: cancel,
		rng:    rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		lag:    cfg.LookupLag,
		byID:   map[string]*record{},
		keys:   map[string]*keyEntry{},
	}
	s.mux = http.NewServeMux()
	if cfg.Flavor == FlavorStripe {
		s.routeStripe()
		return s, nil
	}
	s.mux.HandleFunc("POST /v1/charges", s.handleCreate)
	s.mux.HandleFunc("GET /v1/charges", s.handleList)
	s.mux.HandleFunc("GET /v1/charges/{id}", s.handleGet)
	s.mux.HandleFunc("POST /v1/charges/{id}", s.handleUpdate)
	s.mux.HandleFunc("GET /_sim/objects", s.handleObjects)
	s.mux.HandleFunc("POST /_sim/duplicate", s.handleDuplicate)
	s.mux.HandleFunc("GET /_sim/docs", s.handleDocs)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", "no such endpoint")
	})
	return s, nil
}

// ServeHTTP serves the provider API and the /_sim control endpoints. After
// Close it answers 503.
func (s *Sim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		if s.cfg.Flavor == FlavorStripe {
			writeStripeError(w, errAPI(http.StatusServiceUnavailable, "simulator closed"))
			return
		}
		writeError(w, http.StatusServiceUnavailable, "unavailable", "simulator closed")
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()
	s.mux.ServeHTTP(w, r)
}

// Close stops webhook deliveries and async completions, wakes handlers that
// are holding back a slow response, and waits for all of them to return.
// Close the listener first (Server.Close does) so that no handler is left
// waiting on a client. It is safe to call more than once.
func (s *Sim) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
	s.hooks.CloseIdleConnections()
	return nil
}

// goLocked runs f in a goroutine that Close waits for. s.mu must be held;
// after Close it does nothing, since nobody would wait for f.
func (s *Sim) goLocked(f func()) {
	if s.closed {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
}

// sleep waits d of wall-clock time, or less if the simulator is closed.
func (s *Sim) sleep(d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.ctx.Done():
	}
}

// visibleLocked reports whether lookups may see rec at now. s.mu must be held.
func (s *Sim) visibleLocked(rec *record, now time.Time) bool {
	return !now.Before(rec.committed.Add(s.lag))
}
