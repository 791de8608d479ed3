package auth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// Discovery retries: the first attempt happens in NewConsole and is kept
// short, so that a provider that does not answer delays nobody's start;
// later ones back off up to a minute, so that an outage costs the
// provider a request a minute from each replica.
const (
	firstDiscoveryTimeout = 5 * time.Second
	retryInitial          = time.Second
	retryMax              = time.Minute
)

// discovery is the state of the OpenID provider's discovery. A console
// whose provider cannot be reached still starts — the API, the sends and
// the reconciliation never wait on a part only people use (invariant 11)
// — and answers "sign-in is unavailable" until Run finds the provider.
type discovery struct {
	cfg     Config
	initial time.Duration
	max     time.Duration

	mu   sync.Mutex
	err  error // the last failure; nil once discovered
	down bool  // the outage has been logged (once), its recovery not yet
}

// Discover tries the provider's discovery once. It returns nil when
// sign-in works (at once in demo mode, and once discovery has succeeded),
// else why not. It logs an outage the first time discovery fails and its
// recovery the first time it succeeds after that: never once per attempt.
func (c *Console) Discover(ctx context.Context) error {
	d := c.disc
	if d == nil || c.oidc.Load() != nil {
		return nil
	}
	flow, err := c.newFlow(ctx, d.cfg)
	d.mu.Lock()
	defer d.mu.Unlock()
	if err != nil {
		d.err = err
		if !d.down {
			d.down = true
			c.log.Warn("sign-in is unavailable: the OpenID provider could not be reached; the API and the sends are not affected; retrying in the background",
				"issuer", d.cfg.OIDC.Issuer, "err", err)
		}
		return err
	}
	if c.oidc.CompareAndSwap(nil, flow) && d.down {
		c.log.Info("sign-in is available again: the OpenID provider answered", "issuer", d.cfg.OIDC.Issuer)
	}
	d.err, d.down = nil, false
	return nil
}

// Unavailable returns nil when people can sign in, or why they cannot
// (the provider has not been reached yet). Sessions already signed in go
// on working either way: they live in the ledger database.
func (c *Console) Unavailable() error {
	if c.disc == nil || c.oidc.Load() != nil {
		return nil
	}
	c.disc.mu.Lock()
	defer c.disc.mu.Unlock()
	if c.disc.err == nil {
		return errors.New("sign-in is unavailable: the OpenID provider has not been reached yet")
	}
	return fmt.Errorf("sign-in is unavailable: %w", c.disc.err)
}

// Run retries discovery with exponential backoff until it succeeds or ctx
// ends; it returns at once when sign-in already works. `settle serve` runs
// it with its background loops.
func (c *Console) Run(ctx context.Context) error {
	if c.Unavailable() == nil {
		return nil
	}
	b := backoff.NewExponentialBackOff()
	b.InitialInterval, b.MaxInterval = c.disc.initial, c.disc.max
	_, err := backoff.Retry(ctx, func() (struct{}, error) {
		return struct{}{}, c.Discover(ctx)
	}, backoff.WithBackOff(b), backoff.WithMaxElapsedTime(0))
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// newFlow discovers the provider at cfg.OIDC.Issuer and returns the
// sign-in flow it serves.
func (c *Console) newFlow(ctx context.Context, cfg Config) (*oidcFlow, error) {
	provider, err := oidc.NewProvider(oidc.ClientContext(ctx, c.client), cfg.OIDC.Issuer)
	if err != nil {
		return nil, fmt.Errorf("OpenID provider discovery at %s: %w", cfg.OIDC.Issuer, err)
	}
	return &oidcFlow{
		oauth: oauth2.Config{
			ClientID: cfg.OIDC.ClientID, ClientSecret: cfg.OIDC.ClientSecret, RedirectURL: cfg.OIDC.RedirectURL,
			Endpoint: provider.Endpoint(), Scopes: cfg.OIDC.Scopes,
		},
		verifier: provider.Verifier(&oidc.Config{ClientID: cfg.OIDC.ClientID}),
		client:   c.client,
		codec:    flowCodec(cfg.Session.Key),
		secure:   c.store.secure,
		roles:    cfg.OIDC.RolesClaim,
		name:     cfg.OIDC.NameClaim,
	}, nil
}

// CheckProvider tries the discovery of cfg's provider once, for `settle
// config check`: nil when the provider answered with a usable document.
func CheckProvider(ctx context.Context, cfg Config) error {
	ctx, cancel := context.WithTimeout(ctx, firstDiscoveryTimeout)
	defer cancel()
	client := defaultClient()
	if _, err := oidc.NewProvider(oidc.ClientContext(ctx, client), cfg.OIDC.Issuer); err != nil {
		return fmt.Errorf("OpenID provider discovery at %s: %w", cfg.OIDC.Issuer, err)
	}
	return nil
}

// unreachable reports whether err is a failure to talk to the provider
// at all (no connection, a timeout), not an answer from it.
func unreachable(err error) bool {
	var ue *url.Error
	var ne net.Error
	return errors.As(err, &ue) || errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded)
}
