package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"text/tabwriter"
	"time"

	"settle/deliver"
	"settle/ledger"
)

// callbackCmd runs `settle callback …`: each tenant may have one endpoint
// that settle POSTs a signed notification to when one of its operations is
// SUCCEEDED, FAILED_TERMINAL or ESCALATED.
type callbackCmd struct {
	Set    callbackSet    `cmd:"" help:"set the tenant's callback endpoint; prints a new signing secret on stdout (shown once)"`
	Show   callbackShow   `cmd:"" help:"print the endpoint (never the secret) and the notifications given up after settle serve's --callback-max-attempts"`
	Retry  callbackRetry  `cmd:"" help:"queue the given-up notifications again, due now, with a fresh count of attempts"`
	Test   callbackTest   `cmd:"" help:"send the endpoint one signed test message (event callback.test) now and print how it answered; exit 1 unless 2xx"`
	Remove callbackRemove `cmd:"" help:"remove the endpoint; undelivered notifications are discarded"`
}

// Help is the detail of settle callback --help.
func (callbackCmd) Help() string {
	return `Setting and removing are recorded as actions of cli:NAME in role admin;
--by defaults to the operating-system user. The URL must be https:// and
not an internal address; set accepts --callbacks-allow-http and
--callbacks-allow-net as settle serve does, and the server checks again
under its own flags before each delivery.`
}

// callbackTenant is the tenant whose callback a command is about, checked
// before any store is touched (or created).
type callbackTenant struct {
	dbOption `embed:""`
	Tenant   string `help:"tenant whose callback this is (required)"`
}

func (c callbackTenant) checkTenant() error {
	if c.Tenant == "" {
		return usagef("--tenant is required")
	}
	if !ledger.ValidTenant(c.Tenant) {
		return ledger.Errorf(ledger.EInvalid, "tenant must be 1-63 characters of a-z, 0-9, '.', '_' or '-'")
	}
	return nil
}

type callbackSet struct {
	callbackTenant `embed:""`
	byOption       `embed:""`
	URL            string `name:"url" help:"absolute https:// URL that receives the notifications (required)"`
	callbackRules  `embed:""`
}

func (c *callbackSet) check() error {
	if c.URL == "" {
		return usagef("--url is required")
	}
	if err := errors.Join(c.checkBy(), c.checkTenant()); err != nil {
		return err
	}
	policy, err := c.callbackPolicy()
	if err != nil {
		return err
	}
	return policy.CheckURL(c.URL)
}

func (c *callbackSet) runLedger(ctx context.Context, e *env, s *services) error {
	secret, err := ledger.NewCallbackSecret()
	if err != nil {
		return err
	}
	if err := s.store.SetCallback(asCLI(ctx, c.By, cliRoleAdmin), c.Tenant, c.URL, []byte(secret), time.Now()); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "callback set for tenant %s; the signing secret is shown only once\n", c.Tenant)
	fmt.Fprintln(e.stdout, secret)
	return nil
}

type callbackShow struct {
	callbackTenant `embed:""`
}

func (c *callbackShow) check() error { return c.checkTenant() }

func (c *callbackShow) runLedger(ctx context.Context, e *env, s *services) error {
	cb, err := s.store.GetCallback(ctx, c.Tenant)
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, shown(cb.URL))
	d, err := s.store.CallbackDelivery(ctx, c.Tenant)
	if err != nil {
		return err
	}
	printDelivery(e.stdout, d)
	g, err := s.store.GivenUpNotifications(ctx, c.Tenant, givenUpShown)
	if err != nil {
		return err
	}
	printGivenUp(e.stdout, g, "settle callback retry --tenant NAME")
	return nil
}

type callbackRetry struct {
	callbackTenant `embed:""`
	byOption       `embed:""`
}

func (c *callbackRetry) check() error { return errors.Join(c.checkBy(), c.checkTenant()) }

// runLedger queues them again, recorded as the action callback.retry.
func (c *callbackRetry) runLedger(ctx context.Context, e *env, s *services) error {
	k, err := s.store.RetryGivenUp(asCLI(ctx, c.By, cliRoleAdmin), c.Tenant, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "queued %d given-up notification(s) of tenant %s again\n", k, c.Tenant)
	return nil
}

type callbackRemove struct {
	callbackTenant `embed:""`
	byOption       `embed:""`
}

func (c *callbackRemove) check() error { return errors.Join(c.checkBy(), c.checkTenant()) }

func (c *callbackRemove) runLedger(ctx context.Context, e *env, s *services) error {
	if err := s.store.RemoveCallback(asCLI(ctx, c.By, cliRoleAdmin), c.Tenant); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "removed the callback of tenant %s\n", c.Tenant)
	return nil
}

// callbackRules are where callbacks may go, as settle serve and settle
// callback set take them.
type callbackRules struct {
	CallbacksAllowHTTP bool   `name:"callbacks-allow-http" help:"accept and deliver plain http:// callback URLs; for development only, the signed body then travels in the clear"`
	CallbacksAllowNet  string `name:"callbacks-allow-net" help:"comma-separated addresses or CIDR prefixes callbacks may reach although internal (loopback, private, link-local); empty: none"`
}

// policy is the rules as the ledger applies them; a bad address is a usage
// error naming the flag.
func (r callbackRules) callbackPolicy() (ledger.CallbackPolicy, error) {
	p := ledger.CallbackPolicy{AllowHTTP: r.CallbacksAllowHTTP}
	var err error
	if p.Allow, err = ledger.ParseCallbackNets(r.CallbacksAllowNet); err != nil {
		return p, usagef("invalid value for --callbacks-allow-net: %v", err)
	}
	return p, nil
}

// printDelivery writes how the endpoint has been answering, once it has
// been tried or has notifications waiting (before that, show prints the
// URL alone).
func printDelivery(w io.Writer, d ledger.CallbackDelivery) {
	if d.LastAttemptAt == nil && d.Pending == 0 {
		return
	}
	at := func(t *time.Time) string {
		if t == nil {
			return "none since the endpoint was set"
		}
		return t.UTC().Format(time.RFC3339)
	}
	if d.LastAttemptAt != nil {
		fmt.Fprintf(w, "last attempt: %s, %s\n", at(d.LastAttemptAt), d.LastAnswer())
	}
	fmt.Fprintf(w, "last success: %s\n", at(d.LastSuccessAt))
	if d.FailuresSinceSuccess > 0 {
		fmt.Fprintf(w, "failed attempts since: %d\n", d.FailuresSinceSuccess)
	}
	pending := fmt.Sprint(d.Pending)
	if d.Pending >= ledger.MaxPendingCounted {
		pending += "+"
	}
	fmt.Fprintf(w, "waiting to be delivered: %s\n", pending)
}

type callbackTest struct {
	callbackTenant `embed:""`
	callbackRules  `embed:""`
}

func (c *callbackTest) check() error {
	if err := c.checkTenant(); err != nil {
		return err
	}
	_, err := c.callbackPolicy()
	return err
}

// runLedger sends the test message as settle serve would, under the
// policy of the flags given here (those of settle serve), and records
// nothing.
func (c *callbackTest) runLedger(ctx context.Context, e *env, s *services) error {
	cb, err := s.store.GetCallback(ctx, c.Tenant)
	if err != nil {
		return err
	}
	policy, _ := c.callbackPolicy() // checked
	r := deliver.Test(ctx, deliver.Guarded(&http.Client{Timeout: 10 * time.Second}, policy), policy, cb, time.Now())
	took := ledger.FigureDuration(r.Took)
	switch {
	case r.Err == nil:
		fmt.Fprintf(e.stdout, "the endpoint answered %d in %s\n", r.Status, took)
		return nil
	case r.Status != 0:
		return fmt.Errorf("the endpoint answered %d in %s; check that it verifies Settle-Signature with the current secret", r.Status, took)
	}
	return fmt.Errorf("test delivery: %s", ledger.ErrorMessage(r.Err))
}

// givenUpShown is how many of the latest given-up notifications show lists.
const givenUpShown = 10

// printGivenUp writes the count of given-up notifications (callbacks or
// escalation notices) and the latest ones: what was announced and why it
// failed, never a payload or secret, and the retry command. Nothing given
// up prints nothing, so show's usual answer is the URL alone.
func printGivenUp(w io.Writer, g ledger.GivenUp, retry string) {
	if g.Count == 0 {
		return
	}
	fmt.Fprintf(w, "given up: %d\n", g.Count)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "GAVE UP AT\tOPERATION\tSTATE\tATTEMPTS\tLAST STATUS\tLAST ERROR")
	for _, n := range g.Latest {
		var at string
		if n.GaveUpAt != nil {
			at = n.GaveUpAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\n", at, shown(n.OperationID), n.State, n.Attempts, n.LastStatus, shown(n.LastError))
	}
	tw.Flush()
	if g.Count > len(g.Latest) {
		fmt.Fprintf(w, "(the latest %d shown)\n", len(g.Latest))
	}
	fmt.Fprintln(w, retry+" queues them again once the endpoint is fixed")
}
