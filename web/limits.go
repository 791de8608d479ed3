package web

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"

	"settle/ledger"
)

// Limits of the client API (see README, "Limits").
const (
	// DefaultRateLimit and DefaultRateBurst are each API token's
	// sustained requests per second and burst, unless the token has its
	// own (ledger.TokenRate). One client service with one token may use
	// most of a replica: group commit took PostgreSQL to some 4,000
	// creates a second on two loaded cores (BenchmarkGroupCommit), the API
	// path to fewer. The create slots (--max-creates, per tenant) bound
	// what any number of tokens may hold at once.
	DefaultRateLimit = 1000
	DefaultRateBurst = 2000
	// DefaultMaxCreates caps creates in progress in one replica; one more
	// waits up to DefaultCreateWait for a slot, then is refused with 503.
	// One tenant may hold DefaultMaxCreatesPerTenant of them.
	DefaultMaxCreates          = 32
	DefaultMaxCreatesPerTenant = 24
	DefaultCreateWait          = time.Second
	// MaxPayloadDepth bounds a payload's nesting (the payload object is
	// level 1); MaxPayloadItems bounds the elements of one array and the
	// members of one object. Beyond either a create is 422.
	MaxPayloadDepth = 32
	MaxPayloadItems = 10000
)

// tokenKey and tokenRateKey are where apiAuth leaves the token's id and
// its own rate.
const (
	tokenKey     = "settle.token"
	tokenRateKey = "settle.token_rate"
)

// tokenRates holds one token bucket per API token id, sized by the
// token's own rate (ledger.TokenRate) or, where it has none, the
// replica's default. Its size is bounded by the number of tokens that
// exist: only authenticated ids get one.
type tokenRates struct {
	limit rate.Limit
	burst int
	now   func() time.Time

	mu      sync.Mutex
	buckets map[string]*rate.Limiter
}

// newTokenRates limits each token to perSecond with bursts of burst (0:
// the defaults) unless it has its own rate; with perSecond negative only
// tokens with their own rate are limited.
func newTokenRates(perSecond float64, burst int, now func() time.Time) *tokenRates {
	if perSecond < 0 {
		return &tokenRates{limit: rate.Inf, now: now, buckets: map[string]*rate.Limiter{}}
	}
	if perSecond == 0 {
		perSecond = DefaultRateLimit
		if burst == 0 {
			burst = DefaultRateBurst
		}
	}
	if burst <= 0 {
		burst = max(1, int(math.Ceil(perSecond)))
	}
	return &tokenRates{limit: rate.Limit(perSecond), burst: burst, now: now, buckets: map[string]*rate.Limiter{}}
}

// of is the limit and burst of a token with rate own: its own where set,
// the replica's where not. A token given a rate but no burst bursts a
// second's worth.
func (r *tokenRates) of(own ledger.TokenRate) (rate.Limit, int) {
	limit, burst := r.limit, r.burst
	if own.PerSecond > 0 {
		limit, burst = rate.Limit(own.PerSecond), own.PerSecond
	}
	if own.Burst > 0 {
		burst = own.Burst
	}
	return limit, burst
}

// wait returns 0 when token (its id, and its own rate) may send a request
// now, or how long until it may (the request is then not counted). A
// token's bucket follows its rate as the token cache reads it again.
func (r *tokenRates) wait(token string, own ledger.TokenRate) time.Duration {
	limit, burst := r.of(own)
	if limit == rate.Inf {
		return 0
	}
	now := r.now()
	r.mu.Lock()
	b, ok := r.buckets[token]
	if !ok {
		b = rate.NewLimiter(limit, burst)
		r.buckets[token] = b
	}
	r.mu.Unlock()
	if b.Limit() != limit {
		b.SetLimitAt(now, limit)
	}
	if b.Burst() != burst {
		b.SetBurstAt(now, burst)
	}
	res := b.ReserveN(now, 1)
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return d
	}
	return 0
}

// rateLimit answers 429 rate_limited, with Retry-After in whole seconds,
// to a token that has spent its burst.
func (a *api) rateLimit(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if d := a.rates.wait(c.Get(tokenKey).(string), c.Get(tokenRateKey).(ledger.TokenRate)); d > 0 {
			c.Response().Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(d.Seconds()))))
			return echo.NewHTTPError(http.StatusTooManyRequests,
				"this API token sent more than its rate allows; retry after the Retry-After header's seconds")
		}
		return next(c)
	}
}

// createSlots caps creates in progress: each holds a canonicalised
// payload and a database connection. One tenant may hold at most
// perTenant of them, fewer than all, so however many creates it sends at
// once, another tenant's create finds a slot.
type createSlots struct {
	slots     chan struct{}
	perTenant int
	wait      time.Duration

	mu sync.Mutex
	// tenants holds one semaphore per tenant that has sent a create; it
	// is bounded, like tokenRates, by the tenants that have a token.
	tenants map[string]chan struct{}
}

// newCreateSlots caps creates at n, perTenant of them for one tenant; 0
// means the defaults, and perTenant 0 leaves a quarter of n (at least one
// slot) to other tenants.
func newCreateSlots(n, perTenant int, wait time.Duration) *createSlots {
	n = positive(n, DefaultMaxCreates)
	if perTenant <= 0 {
		perTenant = max(1, n-max(1, n/4))
	}
	return &createSlots{slots: make(chan struct{}, n), perTenant: min(perTenant, n),
		wait: positive(wait, DefaultCreateWait), tenants: map[string]chan struct{}{}}
}

// acquire takes one of tenant's slots and one of the replica's, waiting
// up to the wait in all; ok false means it took neither.
func (cs *createSlots) acquire(ctx context.Context, tenant string) (release func(), ok bool) {
	cs.mu.Lock()
	own, found := cs.tenants[tenant]
	if !found {
		own = make(chan struct{}, cs.perTenant)
		cs.tenants[tenant] = own
	}
	cs.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, cs.wait)
	defer cancel()
	select {
	case own <- struct{}{}:
	case <-ctx.Done():
		return nil, false
	}
	select {
	case cs.slots <- struct{}{}:
	case <-ctx.Done():
		<-own
		return nil, false
	}
	return func() { <-cs.slots; <-own }, true
}

// createSlot holds a create, whose body has been read and checked, until
// a slot is free for up to the wait; then 503 overloaded with Retry-After:
// 1. The body is read first so that a client trickling one in holds no
// slot while it does.
func (a *api) createSlot(c echo.Context) (release func(), err error) {
	release, ok := a.creates.acquire(c.Request().Context(), tenantOf(c))
	if !ok {
		c.Response().Header().Set("Retry-After", "1")
		return nil, echo.NewHTTPError(http.StatusServiceUnavailable,
			"too many creates in progress on this replica or for this tenant; retry after the Retry-After header's seconds")
	}
	return release, nil
}

// checkPayloadShape bounds a payload's nesting and the size of each array
// and object before anything decodes it into a tree. payload is valid
// JSON (decode.CreateBody has parsed it), so a byte scan that skips strings is
// exact.
func checkPayloadShape(payload []byte) error {
	var (
		counts   = make([]int, 0, 8) // commas seen in each open container
		inString bool
		escaped  bool
	)
	for _, b := range payload {
		if inString {
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
			continue
		}
		switch b {
		case '"':
			inString = true
		case '{', '[':
			if len(counts) == MaxPayloadDepth {
				return ledger.Errorf(ledger.EInvalid, "payload nests deeper than %d levels", MaxPayloadDepth)
			}
			counts = append(counts, 0)
		case '}', ']':
			counts = counts[:len(counts)-1]
		case ',':
			counts[len(counts)-1]++
			if counts[len(counts)-1] >= MaxPayloadItems {
				return ledger.Errorf(ledger.EInvalid,
					"payload has an array or object of more than %d elements", MaxPayloadItems)
			}
		}
	}
	return nil
}
