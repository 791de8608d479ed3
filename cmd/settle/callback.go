package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"settle/ledger"
)

const callbackUsage = `usage: settle callback <set|show|retry|remove> --tenant NAME [flags]

  settle callback set --tenant NAME --url URL [--by NAME]   set the tenant's callback endpoint; prints
                                                            a new signing secret on stdout (shown once)
  settle callback show --tenant NAME                        print the endpoint (never the secret) and
                                                            the notifications given up after
                                                            settle serve's --callback-max-attempts
  settle callback retry --tenant NAME [--by NAME]           queue the given-up notifications again,
                                                            due now, with a fresh count of attempts
  settle callback remove --tenant NAME [--by NAME]          remove the endpoint; undelivered
                                                            notifications are discarded

  Setting, retrying and removing are recorded as actions of cli:NAME in role admin;
  --by defaults to the operating-system user. The URL must be https:// and
  not an internal address; set accepts --callbacks-allow-http and
  --callbacks-allow-net as settle serve does, and the server checks again
  under its own flags before each delivery.
`

// callback runs `settle callback …`: each tenant may have one endpoint that
// settle POSTs a signed notification to when one of its operations is
// SUCCEEDED, FAILED_TERMINAL or ESCALATED.
func callback(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, callbackUsage)
		return errUsage
	}
	cmd := args[0]
	if isHelp(cmd) {
		fmt.Fprint(stdout, callbackUsage)
		return errHelp
	}
	if cmd != "set" && cmd != "show" && cmd != "retry" && cmd != "remove" {
		fmt.Fprintf(stderr, "unknown callback command %q\n%s", cmd, callbackUsage)
		return errUsage
	}
	fs := withUsage(flag.NewFlagSet("settle callback "+cmd, flag.ContinueOnError), callbackUsage)
	dbURL := dbFlag(fs)
	tenant := fs.String("tenant", "", "tenant whose callback this is (required)")
	var by *string
	if cmd != "show" {
		by = byFlag(fs, true)
	}
	var (
		endpoint *string
		policy   ledger.CallbackPolicy
	)
	if cmd == "set" {
		endpoint = fs.String("url", "", "absolute https:// URL that receives the notifications (required)")
		fs.BoolVar(&policy.AllowHTTP, "callbacks-allow-http", false, "accept a plain http:// URL, for development (the server must allow it too)")
		fs.Func("callbacks-allow-net", "comma-separated addresses or CIDR prefixes the URL may name although internal",
			func(v string) (err error) { policy.Allow, err = ledger.ParseCallbackNets(v); return err })
	}
	if err := parse(fs, args[1:], stdout, stderr); err != nil {
		return err
	}
	if *tenant == "" || (endpoint != nil && *endpoint == "") || (by != nil && *by == "") {
		fmt.Fprint(stderr, callbackUsage)
		return errUsage
	}
	// Refuse a bad tenant or URL before touching (or creating) a store.
	if !ledger.ValidTenant(*tenant) {
		return ledger.Errorf(ledger.EInvalid, "tenant must be 1-63 characters of a-z, 0-9, '.', '_' or '-'")
	}
	if endpoint != nil {
		if err := policy.CheckURL(*endpoint); err != nil {
			return err
		}
	}

	st, _, err := openStore(ctx, *dbURL, stderr)
	if err != nil {
		return err
	}
	defer st.Close()
	cs, ok := any(st).(ledger.CallbackStore)
	if !ok {
		return fmt.Errorf("this store does not support callbacks")
	}

	switch cmd {
	case "set":
		secret, err := ledger.NewCallbackSecret()
		if err != nil {
			return err
		}
		if err := cs.SetCallback(asCLI(ctx, *by, cliRoleAdmin), *tenant, *endpoint, []byte(secret), time.Now()); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "callback set for tenant %s; the signing secret is shown only once\n", *tenant)
		fmt.Fprintln(stdout, secret)
	case "show":
		c, err := cs.GetCallback(ctx, *tenant)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, shown(c.URL))
		g, err := cs.GivenUpNotifications(ctx, *tenant, givenUpShown)
		if err != nil {
			return err
		}
		printGivenUp(stdout, g, "settle callback retry --tenant NAME")
	case "retry":
		k, err := cs.RetryGivenUp(asCLI(ctx, *by, cliRoleAdmin), *tenant, time.Now())
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "queued %d given-up notification(s) of tenant %s again\n", k, *tenant)
	case "remove":
		if err := cs.RemoveCallback(asCLI(ctx, *by, cliRoleAdmin), *tenant); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "removed the callback of tenant %s\n", *tenant)
	}
	return nil
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
