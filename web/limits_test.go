package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/web"
)

// createWith returns a create request whose payload is payload.
func createWith(intent, payload string) string {
	return fmt.Sprintf(`{"target":"payments","operation_type":"charge","intent_ref":%q,"payload":%s}`, intent, payload)
}

// The payload's shape is bounded: nesting up to MaxPayloadDepth and up to
// MaxPayloadItems elements in one array (or members in one object) are
// taken; one more is 422 naming the limit. Strings holding brackets and
// commas do not count.
func TestLimits_PayloadShape(t *testing.T) {
	t.Parallel()
	nested := func(depth int) string { // the payload object is level 1
		return strings.Repeat(`{"a":`, depth-1) + `{}` + strings.Repeat(`}`, depth-1)
	}
	array := func(n int) string {
		return `{"list":[` + strings.TrimSuffix(strings.Repeat("0,", n), ",") + `]}`
	}
	members := func(n int) string {
		var b strings.Builder
		b.WriteString("{")
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `"k%d":0`, i)
		}
		return b.String() + "}"
	}
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		e := serve(t, open(t), web.Config{Limits: web.Limits{BodyLimit: 1 << 20}})
		for _, c := range []struct {
			name, payload string
			status        int
			limit         string
		}{
			{"DepthAtLimit", nested(web.MaxPayloadDepth), 201, ""},
			{"DepthOver", nested(web.MaxPayloadDepth + 1), 422, strconv.Itoa(web.MaxPayloadDepth)},
			{"DeepArrays", `{"a":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`, 422, strconv.Itoa(web.MaxPayloadDepth)},
			{"ArrayAtLimit", array(web.MaxPayloadItems), 201, ""},
			{"ArrayOver", array(web.MaxPayloadItems + 1), 422, strconv.Itoa(web.MaxPayloadItems)},
			{"MembersAtLimit", members(web.MaxPayloadItems), 201, ""},
			{"MembersOver", members(web.MaxPayloadItems + 1), 422, strconv.Itoa(web.MaxPayloadItems)},
			{"BracketsInStrings", `{"s":"` + strings.Repeat(`[{,\"`, 20000) + `"}`, 201, ""},
		} {
			t.Run(c.name, func(t *testing.T) {
				r := e.post(createWith(c.name, c.payload))
				if r.status != c.status {
					t.Fatalf("status %d, want %d: %.300s", r.status, c.status, r.body)
				}
				if c.status == 422 {
					wantError(t, r, 422, "invalid")
					if msg := r.json(t)["message"].(string); !strings.Contains(msg, c.limit) {
						t.Fatalf("message %q does not name the limit %s", msg, c.limit)
					}
				}
			})
		}
	})
}

// gatedStore holds every Create until the gate opens.
type gatedStore struct {
	store
	entered chan struct{}
	gate    chan struct{}
}

func (g gatedStore) Create(ctx context.Context, n ledger.NewOperation) (ledger.Operation, bool, error) {
	g.entered <- struct{}{}
	<-g.gate
	return g.store.Create(ctx, n)
}

// Creates in progress are capped: with MaxCreates of them running, one
// more waits CreateWait for a slot and is then refused with 503
// "overloaded" and Retry-After; reads are not held up; once a slot frees,
// creates go through again.
func TestLimits_ConcurrentCreates(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		s := open(t)
		g := gatedStore{store: s, entered: make(chan struct{}, 8), gate: make(chan struct{})}
		const wait = 200 * time.Millisecond
		e := serve(t, s, web.Config{Store: g, Limits: web.Limits{MaxCreates: 2, MaxCreatesPerTenant: 2, CreateWait: wait}})

		var wg sync.WaitGroup
		held := make(chan response, 2)
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				held <- e.post(createWith(fmt.Sprintf("held-%d", i), `{"amount":1}`))
			}()
		}
		<-g.entered
		<-g.entered

		start := time.Now()
		r := e.post(createWith("third", `{"amount":1}`))
		took := time.Since(start)
		wantError(t, r, http.StatusServiceUnavailable, "overloaded")
		if ra := r.header.Get("Retry-After"); ra != "1" {
			t.Fatalf("Retry-After %q, want 1", ra)
		}
		if took < wait {
			t.Fatalf("refused after %s, before waiting %s for a slot", took, wait)
		}
		if r := e.do(http.MethodGet, "/api/v1/operations", "", nil); r.status != http.StatusOK {
			t.Fatalf("a list while creates are capped: %d", r.status)
		}

		close(g.gate)
		wg.Wait()
		close(held)
		for r := range held {
			if r.status != http.StatusCreated {
				t.Fatalf("a held create: %d %s", r.status, r.body)
			}
		}
		if r := e.post(createWith("after", `{"amount":1}`)); r.status != http.StatusCreated {
			t.Fatalf("a create after the slots freed: %d %s", r.status, r.body)
		}
	})
}

// Each API token has its own rate: beyond its burst a request is 429
// "rate_limited" with Retry-After, on every API route; another token of
// the same tenant is not affected; after the wait it is served again.
func TestLimits_RatePerToken(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		// The limiter reads the server's clock, which only this test moves:
		// a slow machine between two requests refills no bucket.
		clk := ledgertest.NewClock()
		e := serve(t, open(t), web.Config{Now: clk.Now, Limits: web.Limits{RateLimit: 5, RateBurst: 3}})
		other := e.newToken("acme")
		for i := range 3 {
			if r := e.do(http.MethodGet, "/api/v1/operations", "", nil); r.status != http.StatusOK {
				t.Fatalf("request %d within the burst: %d", i, r.status)
			}
		}
		for _, r := range []response{
			e.do(http.MethodGet, "/api/v1/operations", "", nil),
			e.post(createWith("limited", `{"amount":1}`)),
			e.do(http.MethodGet, "/api/v1/operations/00000000-0000-4000-8000-000000000000", "", nil),
		} {
			wantError(t, r, http.StatusTooManyRequests, "rate_limited")
			ra, err := strconv.Atoi(r.header.Get("Retry-After"))
			if err != nil || ra < 1 || ra > 1 {
				t.Fatalf("Retry-After %q; want 1 (a token every 200ms)", r.header.Get("Retry-After"))
			}
			if r.header.Get("Cache-Control") != "no-store" {
				t.Fatalf("429 without Cache-Control: no-store")
			}
		}
		if r := e.do(http.MethodGet, "/api/v1/operations", "", nil, "Authorization", "Bearer "+other); r.status != http.StatusOK {
			t.Fatalf("another token of the same tenant: %d", r.status)
		}
		clk.Advance(250 * time.Millisecond) // one token back at 5/s
		if r := e.do(http.MethodGet, "/api/v1/operations", "", nil); r.status != http.StatusOK {
			t.Fatalf("after the wait: %d %s", r.status, r.body)
		}
	})
}

// A token's own rate (settle token create --rate, --burst) replaces the
// replica's for that token alone, above or below it, and applies on a
// replica that limits no other token (--rate-limit 0); a token without
// one keeps the replica's.
func TestLimits_TokenOwnRate(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		clk := ledgertest.NewClock()
		burst := func(e *env, token string, n int) int {
			t.Helper()
			for i := range n {
				r := e.do(http.MethodGet, "/api/v1/operations", "", nil, "Authorization", "Bearer "+token)
				if r.status == http.StatusTooManyRequests {
					if r.header.Get("Retry-After") == "" {
						t.Fatal("429 without Retry-After")
					}
					return i
				}
				if r.status != http.StatusOK {
					t.Fatalf("request %d: %d %s", i, r.status, r.body)
				}
			}
			return n
		}
		s := open(t)
		e := serve(t, s, web.Config{Now: clk.Now, Limits: web.Limits{RateLimit: 5, RateBurst: 3}})
		slow := e.newTokenRated("acme", ledger.TokenRate{PerSecond: 1, Burst: 2})
		fast := e.newTokenRated("acme", ledger.TokenRate{PerSecond: 100})
		if n := burst(e, e.token, 10); n != 3 {
			t.Fatalf("a token without its own rate was served %d at once, want the replica's burst of 3", n)
		}
		if n := burst(e, slow, 10); n != 2 {
			t.Fatalf("a token of 1/s bursting 2 was served %d at once", n)
		}
		if n := burst(e, fast, 150); n != 100 {
			t.Fatalf("a token of 100/s (its burst: a second's worth) was served %d at once", n)
		}
		unlimited := serve(t, s, web.Config{Now: clk.Now, Limits: web.Limits{RateLimit: -1}})
		if n := burst(unlimited, unlimited.token, 50); n != 50 {
			t.Fatalf("a replica without a default limit refused a plain token after %d", n)
		}
		// Each replica keeps its own buckets: the 1/s token's is full here.
		if n := burst(unlimited, slow, 10); n != 2 {
			t.Fatalf("a replica without a default limit served the 1/s token %d at once, want its own burst of 2", n)
		}
	})
}

// TestAPI_TokenCacheRevocationBound: a busy client's token is answered
// from memory, and a revocation made elsewhere (another replica, the CLI:
// here, the store directly) refuses it as soon as the cached copy is
// ledger.TokenCacheTTL old. A token made after an unknown secret was
// refused works at once: refusals are never cached.
func TestAPI_TokenCacheRevocationBound(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		clk := ledgertest.NewClock()
		e := serve(t, open(t), web.Config{Now: clk.Now})
		if r := e.do(http.MethodGet, "/api/v1/operations", "", nil); r.status != http.StatusOK {
			t.Fatalf("first request: %d", r.status)
		}
		tokens, err := e.store.ListTokens(context.Background(), "acme")
		if err != nil || len(tokens) != 1 {
			t.Fatalf("tokens %v, %v", tokens, err)
		}
		if err := e.store.RevokeToken(adminCtx, "acme", tokens[0].ID, time.Now()); err != nil {
			t.Fatal(err)
		}
		clk.Advance(ledger.TokenCacheTTL - time.Millisecond)
		if r := e.do(http.MethodGet, "/api/v1/operations", "", nil); r.status != http.StatusOK {
			t.Fatalf("inside the cache's bound the cached token answers: %d", r.status)
		}
		clk.Advance(time.Millisecond)
		wantError(t, e.do(http.MethodGet, "/api/v1/operations", "", nil), http.StatusUnauthorized, "unauthorized")

		secret, tok, err := ledger.NewToken("acme", "later", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		wantError(t, e.do(http.MethodGet, "/api/v1/operations", "", nil, "Authorization", "Bearer "+secret),
			http.StatusUnauthorized, "unauthorized")
		if err := e.store.CreateToken(adminCtx, tok); err != nil {
			t.Fatal(err)
		}
		if r := e.do(http.MethodGet, "/api/v1/operations", "", nil, "Authorization", "Bearer "+secret); r.status != http.StatusOK {
			t.Fatalf("a token made after its secret was refused: %d", r.status)
		}
	})
}
