package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"settle/ledger"
)

const tenantUsage = `usage: settle tenant <set|unset|show|erase> --tenant NAME [flags]

  settle tenant set --tenant NAME --param NAME=VALUE [--param NAME=VALUE ...] [--force] [--by NAME]
        set request parameters of the tenant
  settle tenant unset --tenant NAME --param NAME [--param NAME ...] [--force] [--by NAME]
        remove request parameters (removing one that is not set changes nothing)
  settle tenant show --tenant NAME [--format text|json]
        print the tenant's parameters, values included
  settle tenant erase --tenant NAME [--force] [--by NAME]
        remove all of the tenant's data and print how many rows of each kind went

  A tenant's parameters are what target contracts place into its requests
  ({tenant.NAME} in headers or body_fields), such as the connected account a
  platform acts for: names are a lower-case letter, then up to 31 of a-z, 0-9
  and '_'; values 1-256 printable characters; at most 32 per tenant.

  A first value is always accepted. Changing or removing a value is refused
  while the tenant has operations not yet final (PREPARED, IN_FLIGHT, UNKNOWN,
  ESCALATED): their same-key replays and lookups would go out with the new
  value, to an account where their idempotency keys mean nothing. --force
  makes the change anyway, and its record says so.

  Each parameter changed is recorded as an action of cli:NAME in role admin
  (its name, never its value); --by defaults to the operating-system user.

  erase deletes the tenant's operations with their events, callback
  notifications, findings, resolutions and payload conflicts; its API tokens,
  callback endpoint and secret, and parameters; the quarantine items in its
  scope or naming its operations, with their webhook deliveries; its recorded
  actions and figure rollups. What remains is the erasure's own record: when,
  by whom (cli:NAME), whether forced, and the counts. It is refused while the
  tenant has operations not yet final unless --force: a send, replay or lookup
  in progress would lose the record of what it did. An erasure cut short is
  completed by running it again.
`

// paramFlags collects the --param arguments as given. They are checked
// after parsing, not in Set: the flag package would quote a refused value
// in its error.
type paramFlags []string

func (p *paramFlags) String() string { return strings.Join(*p, ",") }

func (p *paramFlags) Set(s string) error { *p = append(*p, s); return nil }

// tenant runs `settle tenant …`: the tenant's named request parameters.
func tenant(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	switch {
	case len(args) == 0:
		fmt.Fprint(stderr, tenantUsage)
		return errUsage
	case isHelp(args[0]):
		fmt.Fprint(stdout, tenantUsage)
		return errHelp
	case args[0] == "erase":
		return eraseTenant(ctx, args[1:], stdout, stderr)
	case args[0] != "set" && args[0] != "unset" && args[0] != "show":
		fmt.Fprintf(stderr, "settle tenant: unknown command %q (want set, unset, show or erase)\n", args[0])
		return errUsage
	}
	cmd := args[0]
	fs := withUsage(flag.NewFlagSet("settle tenant "+cmd, flag.ContinueOnError), tenantUsage)
	dbURL := dbFlag(fs)
	name := fs.String("tenant", "", "tenant whose parameters these are (required)")
	var (
		params paramFlags
		force  *bool
		by     *string
		format *string
	)
	if cmd == "show" {
		format = fs.String("format", "text", "text (a table) or json")
	} else {
		what := "NAME=VALUE to set (repeatable)"
		if cmd == "unset" {
			what = "NAME to remove (repeatable)"
		}
		fs.Var(&params, "param", what)
		force = fs.Bool("force", false, "change or remove values even while operations are not yet final")
		by = byFlag(fs, true)
	}
	if err := parse(fs, args[1:], stdout, stderr); err != nil {
		return err
	}
	switch {
	case *name == "":
		fmt.Fprintf(stderr, "settle tenant %s: --tenant is required\n", cmd)
		return errUsage
	case cmd != "show" && len(params) == 0:
		fmt.Fprintf(stderr, "settle tenant %s: --param is required\n", cmd)
		return errUsage
	case by != nil && *by == "":
		fmt.Fprintf(stderr, "settle tenant %s: --by is required (who acts)\n", cmd)
		return errUsage
	case format != nil && *format != "text" && *format != "json":
		fmt.Fprintf(stderr, "settle tenant show: --format must be text or json\n")
		return errUsage
	}
	set, unset, err := paramArgs(cmd, params, stderr)
	if err != nil {
		return err
	}
	// Refuse a bad tenant, name or value before touching (or creating) a store.
	if cmd == "show" {
		if !ledger.ValidTenant(*name) {
			return ledger.Errorf(ledger.EInvalid, "tenant must be 1-63 characters of a-z, 0-9, '.', '_' or '-'")
		}
	} else if err := ledger.ValidateTenantParams(*name, set, unset); err != nil {
		return err
	}

	st, _, err := openStore(ctx, *dbURL, stderr)
	if err != nil {
		return err
	}
	defer st.Close()
	if cmd == "show" {
		list, err := st.ListTenantParams(ctx, *name)
		if err != nil {
			return err
		}
		return showParams(stdout, *name, list, *format)
	}
	err = st.SetTenantParams(asCLI(ctx, *by, cliRoleAdmin), *name, set, unset, *force)
	if ledger.ErrorCode(err) == ledger.EConflict {
		return ledger.Errorf(ledger.EConflict, "%s (--force)", ledger.ErrorMessage(err))
	}
	if err != nil {
		return err
	}
	names := unset
	if cmd == "set" {
		names = make([]string, 0, len(params))
		for _, p := range params {
			n, _, _ := strings.Cut(p, "=")
			names = append(names, n)
		}
	}
	fmt.Fprintf(stdout, "%s %s for tenant %s\n", cmd, strings.Join(names, ", "), *name)
	return nil
}

// paramArgs reads the --param arguments of set (NAME=VALUE) or unset
// (NAME). A malformed one is a usage error that names the flag but never
// quotes the argument, which may be a value.
func paramArgs(cmd string, params paramFlags, stderr io.Writer) (map[string]string, []string, error) {
	if cmd == "show" {
		return nil, nil, nil
	}
	set := map[string]string{}
	var unset []string
	seen := map[string]bool{}
	for i, p := range params {
		n, v, hasValue := strings.Cut(p, "=")
		switch {
		case cmd == "set" && (!hasValue || n == ""):
			fmt.Fprintf(stderr, "settle tenant set: --param #%d must be NAME=VALUE\n", i+1)
			return nil, nil, errUsage
		case cmd == "unset" && hasValue:
			fmt.Fprintf(stderr, "settle tenant unset: --param #%d must be a NAME alone, without =VALUE\n", i+1)
			return nil, nil, errUsage
		case seen[n] && ledger.ValidTenantParamName(n):
			fmt.Fprintf(stderr, "settle tenant %s: --param %s is given twice\n", cmd, n)
			return nil, nil, errUsage
		}
		seen[n] = true
		if cmd == "set" {
			set[n] = v
		} else {
			unset = append(unset, n)
		}
	}
	return set, unset, nil
}

// paramJSON is one parameter in `settle tenant show --format json`.
type paramJSON struct {
	Name      string    `json:"name"`
	Value     string    `json:"value"`
	UpdatedAt time.Time `json:"updated_at"`
}

// showParams prints the tenant's parameters: they are not secrets (an
// operator checks them here), but they are never logged.
func showParams(w io.Writer, tenant string, list []ledger.TenantParam, format string) error {
	if format == "json" {
		out := struct {
			Tenant string      `json:"tenant"`
			Params []paramJSON `json:"params"`
		}{Tenant: tenant, Params: []paramJSON{}}
		for _, p := range list {
			out.Params = append(out.Params, paramJSON{Name: p.Name, Value: p.Value, UpdatedAt: p.UpdatedAt})
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	if len(list) == 0 {
		_, err := fmt.Fprintf(w, "tenant %s has no request parameters\n", tenant)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVALUE\tUPDATED")
	for _, p := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Name, shown(p.Value), p.UpdatedAt.UTC().Format(time.RFC3339))
	}
	return tw.Flush()
}

// eraseTenant runs `settle tenant erase`.
func eraseTenant(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := withUsage(flag.NewFlagSet("settle tenant erase", flag.ContinueOnError), tenantUsage)
	dbURL := dbFlag(fs)
	name := fs.String("tenant", "", "tenant whose data to erase (required)")
	force := fs.Bool("force", false, "erase even while operations are not yet final")
	by := byFlag(fs, true)
	if err := parse(fs, args, stdout, stderr); err != nil {
		return err
	}
	switch {
	case *name == "":
		fmt.Fprintln(stderr, "settle tenant erase: --tenant is required")
		return errUsage
	case *by == "":
		fmt.Fprintln(stderr, "settle tenant erase: --by is required (who acts)")
		return errUsage
	case !ledger.ValidTenant(*name):
		return ledger.Errorf(ledger.EInvalid, "tenant must be 1-63 characters of a-z, 0-9, '.', '_' or '-'")
	}
	st, _, err := openStore(ctx, *dbURL, stderr)
	if err != nil {
		return err
	}
	defer st.Close()
	e, err := st.EraseTenant(asCLI(ctx, *by, cliRoleAdmin), *name, *force)
	if ledger.ErrorCode(err) == ledger.EConflict {
		return ledger.Errorf(ledger.EConflict, "%s (--force)", ledger.ErrorMessage(err))
	}
	if err != nil {
		return err
	}
	heading := fmt.Sprintf("settle tenant erase: tenant %s erased by %s (erasure %d)", *name, e.Subject, e.ID)
	if e.Forced && e.Unfinished > 0 {
		heading += fmt.Sprintf(", forced with %d not yet final", e.Unfinished)
	}
	return printCounts(stdout, heading, e.Counts, erasureKinds)
}

// erasureKinds are the kinds a tenant's erasure removes, in print order.
var erasureKinds = []string{"operations", "events", "notifications", "findings", "resolutions", "conflicts",
	"tokens", "callbacks", "params", "quarantine", "deliveries", "actions", "rollups"}
