package main

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	"settle/target/sim"
)

// simTargetName is the contract schema's rule for target names (package
// target), checked here so that a bad --name is a usage error, not a
// contract that settle serve later refuses.
var simTargetName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// simCmd runs `settle sim`: the simulated payments target as a server of
// its own, for drills against a running settle. With --print-contract it
// prints the contract that describes a simulator started with the same
// flags, and exits.
type simCmd struct {
	Addr             string        `default:"127.0.0.1:9090" help:"listen address HOST:PORT; the contract's base_url names it"`
	Flavor           string        `default:"settle" help:"API to speak: settle (charges in capability classes A-D) or stripe (Stripe's PaymentIntents; secret key from env ${sim_api_key_env})"`
	Class            string        `default:"A" help:"settle flavor: capability class A (idempotency keys and lookup), B (lookup), C (lookup and If-Match) or D (none)"`
	Retention        time.Duration `default:"24h" help:"class A and stripe: how long an Idempotency-Key is honoured"`
	Lag              time.Duration `default:"0s" help:"how long after commit a charge becomes visible to lookups (stripe: to search)"`
	Async            bool          `help:"settle flavor: answer creates with 202 and a pending charge that succeeds 1s later"`
	WebhookURL       string        `name:"webhook-url" help:"settle flavor: send signed charge.succeeded events here; the secret comes from env ${sim_webhook_secret_env}"`
	AccountRequired  bool          `name:"account-required" help:"stripe: refuse requests without a Stripe-Account header (400), as a Connect platform's; only then does --print-contract send Stripe-Account from the tenant parameter account"`
	Seed             uint64        `default:"1" help:"seed of the fault draws: the same seed and requests draw the same faults"`
	Name             string        `default:"sim" help:"target name in the printed contract"`
	PrintContract    bool          `name:"print-contract" help:"print the contracts YAML for a simulator with these flags, and exit"`
	DropAfterCommit  float64       `name:"drop-after-commit" help:"probability 0-1 that a create commits, then the connection closes unanswered"`
	FailAfterCommit  float64       `name:"fail-after-commit" help:"probability 0-1 that a create commits, then answers 500 (stripe: saved under its Idempotency-Key)"`
	FailBeforeCommit float64       `name:"fail-before-commit" help:"probability 0-1 that a create answers 503 without creating anything"`
	Slow             float64       `help:"probability 0-1 that a create commits, then answers after 2s (the contract's timeout)"`
	Reset            float64       `help:"probability 0-1 that the connection is reset before anything is created"`
}

// Help is the detail of settle sim --help.
func (simCmd) Help() string {
	return `Serves the simulated payments target, or with --print-contract prints its contract.
--flavor stripe speaks Stripe's PaymentIntents API instead of settle's charges API and accepts the
secret key in the environment variable ` + sim.APIKeyEnv + ` (GET /_sim/docs says what it does).
A flag of the other flavor is refused, not ignored: --class, --async and --webhook-url are the
settle flavor's, --account-required is the stripe flavor's.`
}

func (c *simCmd) run(ctx context.Context, e *env) error {
	stdout, set := e.stdout, e.given
	addr, flavor, class, retention, lag, async, webhookURL := &c.Addr, &c.Flavor, &c.Class, &c.Retention, &c.Lag, &c.Async, &c.WebhookURL
	accountRequired, seed, name, printContract := &c.AccountRequired, &c.Seed, &c.Name, &c.PrintContract
	odds := []struct {
		flag string
		p    *float64
	}{
		{"drop-after-commit", &c.DropAfterCommit}, {"fail-after-commit", &c.FailAfterCommit},
		{"fail-before-commit", &c.FailBeforeCommit}, {"slow", &c.Slow}, {"reset", &c.Reset},
	}
	bad := usagef
	cfg := sim.Config{
		Addr:      *addr,
		Retention: *retention,
		LookupLag: *lag,
		Seed:      *seed,
	}
	switch *flavor {
	case "settle":
		cfg.Class, cfg.Async, cfg.WebhookURL = strings.ToUpper(*class), *async, *webhookURL
		if set["account-required"] {
			return bad("--account-required applies only to --flavor stripe")
		}
		if !slices.Contains([]string{"A", "B", "C", "D"}, cfg.Class) {
			return bad("--class must be A, B, C or D")
		}
	case sim.FlavorStripe:
		cfg.Flavor, cfg.RequireAccount = sim.FlavorStripe, *accountRequired
		for _, name := range []string{"class", "async", "webhook-url"} {
			if set[name] {
				return bad("--%s applies only to --flavor settle; the stripe flavor behaves as Stripe does", name)
			}
		}
		// The key is a secret: never repeated, whatever is wrong with it.
		cfg.APIKey = os.Getenv(sim.APIKeyEnv)
		if cfg.APIKey == "" {
			return bad("--flavor stripe needs the secret key it accepts in the environment variable %s", sim.APIKeyEnv)
		}
		if strings.IndexFunc(cfg.APIKey, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
			return bad("the secret key in %s must not contain spaces or control characters", sim.APIKeyEnv)
		}
	default:
		return bad("--flavor must be settle or stripe")
	}
	switch {
	case *retention <= 0:
		return bad("--retention must be more than 0s")
	case *lag < 0:
		return bad("--lag must not be negative")
	case !simTargetName.MatchString(*name):
		return bad("--name must be 1 to 64 of A-Z a-z 0-9 . _ -, starting with a letter or digit")
	}
	sum := 0.0
	for _, o := range odds {
		if *o.p < 0 || *o.p > 1 || math.IsNaN(*o.p) {
			return bad("--%s must be a probability from 0 to 1", o.flag)
		}
		sum += *o.p
	}
	// One draw picks at most one fault per request, so the odds share 1.
	if sum > 1+1e-9 {
		return bad("the fault probabilities add up to %g; at most 1", sum)
	}
	cfg.DropAfterCommit, cfg.FailAfterCommit, cfg.FailBeforeCommit, cfg.Slow, cfg.Reset = *odds[0].p, *odds[1].p, *odds[2].p, *odds[3].p, *odds[4].p
	if cfg.WebhookURL != "" {
		// The URL is not echoed: it may carry a token.
		if u, err := url.Parse(cfg.WebhookURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return bad("--webhook-url must be an absolute http or https URL")
		}
		if cfg.WebhookSecret = os.Getenv(sim.WebhookSecretEnv); strings.TrimSpace(cfg.WebhookSecret) == "" {
			return bad("--webhook-url needs the signing secret in the environment variable %s", sim.WebhookSecretEnv)
		}
	}

	// The contract names the URL of a listening server, so even
	// --print-contract starts one, if only for a moment.
	srv, err := sim.Start(cfg)
	if err != nil {
		return err
	}
	if *printContract {
		contract := srv.Contract(*name)
		if err := srv.Close(); err != nil {
			return err
		}
		_, err := stdout.Write(contract)
		return err
	}
	if cfg.Flavor == sim.FlavorStripe {
		fmt.Fprintf(stdout, "settle sim: listening on %s (flavor stripe)\n", srv.URL())
	} else {
		fmt.Fprintf(stdout, "settle sim: listening on %s (class %s)\n", srv.URL(), cfg.Class)
	}
	<-ctx.Done()
	return srv.Close()
}
