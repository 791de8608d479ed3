package ledger

import (
	"context"
	"sync"
	"time"
)

// TokenCacheTTL is how long a TokenCache answers a token from memory: the
// longest a revocation made elsewhere (another replica, the CLI) takes to
// refuse the token in this process. A revocation through the cache itself
// takes effect at once.
const TokenCacheTTL = time.Second

// maxCachedTokens bounds the cache; past it, the cache starts afresh.
// Only tokens that exist are cached, so a flood of made-up secrets never
// grows it.
const maxCachedTokens = 10_000

// TokenCache is a TokenStore that remembers the tokens it has found for
// TokenCacheTTL, so that an API request costs no token look-up in the
// database while its client is busy. Authenticate's rules are unchanged:
// a revoked token is refused as soon as the cached copy is older than the
// TTL, an unknown one is always asked of the store (a token just created
// works at once), and a token's last use is written at most once per
// TouchEvery as before, now without a database round trip in between.
type TokenCache struct {
	TokenStore
	now func() time.Time

	mu      sync.Mutex
	entries map[string]cachedToken // by hash
}

type cachedToken struct {
	t       Token
	fetched time.Time
}

// NewTokenCache returns the cache over s; now is its clock (nil:
// time.Now).
func NewTokenCache(s TokenStore, now func() time.Time) *TokenCache {
	if now == nil {
		now = time.Now
	}
	return &TokenCache{TokenStore: s, now: now, entries: map[string]cachedToken{}}
}

// TokenByHash implements TokenStore: from memory when the copy is younger
// than TokenCacheTTL, else from the store.
func (c *TokenCache) TokenByHash(ctx context.Context, hash []byte) (Token, error) {
	now := c.now()
	c.mu.Lock()
	e, ok := c.entries[string(hash)]
	c.mu.Unlock()
	if ok && now.Sub(e.fetched) < TokenCacheTTL && !now.Before(e.fetched) {
		return e.t, nil
	}
	t, err := c.TokenStore.TokenByHash(ctx, hash)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		delete(c.entries, string(hash))
		return t, err
	}
	if len(c.entries) >= maxCachedTokens {
		c.entries = map[string]cachedToken{}
	}
	c.entries[string(hash)] = cachedToken{t: t, fetched: now}
	return t, nil
}

// TouchToken implements TokenStore. The cached copy learns the use, so
// the next requests inside TouchEvery do not try to write it again.
func (c *TokenCache) TouchToken(ctx context.Context, tenant, id string, at time.Time) (bool, error) {
	wrote, err := c.TokenStore.TouchToken(ctx, tenant, id, at)
	if err == nil {
		c.mu.Lock()
		for h, e := range c.entries {
			if e.t.Tenant == tenant && e.t.ID == id {
				e.t.LastUsedAt = &at
				c.entries[h] = e
			}
		}
		c.mu.Unlock()
	}
	return wrote, err
}

// RevokeToken implements TokenStore; the revoked token is refused here at
// once.
func (c *TokenCache) RevokeToken(ctx context.Context, tenant, id string, at time.Time) error {
	err := c.TokenStore.RevokeToken(ctx, tenant, id, at)
	c.mu.Lock()
	for h, e := range c.entries {
		if e.t.Tenant == tenant && e.t.ID == id {
			delete(c.entries, h)
		}
	}
	c.mu.Unlock()
	return err
}
