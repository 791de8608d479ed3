package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"settle/ledger"
)

// tenantCmd runs `settle tenant …`: the tenant's named request parameters,
// and the erasure of all of its data.
type tenantCmd struct {
	Create tenantCreate `cmd:"" help:"create a tenant, so that API tokens can be made for it"`
	List   tenantList   `cmd:"" help:"list the tenants settle knows"`
	Set    tenantSet    `cmd:"" help:"set request parameters of the tenant"`
	Unset  tenantUnset  `cmd:"" help:"remove request parameters (removing one that is not set changes nothing)"`
	Show   tenantShow   `cmd:"" help:"print the tenant's parameters, values included"`
	Erase  tenantErase  `cmd:"" help:"remove all of the tenant's data and print how many rows of each kind went"`
}

// Help is the detail of settle tenant --help.
func (tenantCmd) Help() string {
	return `API tokens are made only for tenants settle knows, so that a misspelt
--tenant is refused rather than becoming a working token:
  settle tenant create --tenant NAME     (recorded as tenant.create)
  settle tenant list

A tenant's parameters are what target contracts place into its requests
({tenant.NAME} in headers or body_fields), such as the connected account a
platform acts for: names are a lower-case letter, then up to 31 of a-z, 0-9
and '_'; values 1-256 printable characters; at most 32 per tenant.
  settle tenant set --tenant NAME --param NAME=VALUE [--param NAME=VALUE ...]

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
completed by running it again.`
}

type tenantName struct {
	dbOption `embed:""`
	Tenant   string `help:"the tenant (required)"`
}

func (t tenantName) checkName() error {
	if t.Tenant == "" {
		return usagef("--tenant is required")
	}
	return nil
}

func validTenant(name string) error {
	if !ledger.ValidTenant(name) {
		return ledger.Errorf(ledger.EInvalid, "tenant must be 1-63 characters of a-z, 0-9, '.', '_' or '-'")
	}
	return nil
}

// paramChange is set's and unset's options.
type paramChange struct {
	tenantName `embed:""`
	Force      bool `help:"change or remove values even while operations are not yet final"`
	byOption   `embed:""`
	set        map[string]string
	unset      []string
}

// checkChange checks the options of cmd (set or unset), its --param
// arguments and the tenant's rules before touching (or creating) a store.
func (c *paramChange) checkChange(cmd string, params []string) error {
	switch {
	case c.Tenant == "":
		return usagef("--tenant is required")
	case len(params) == 0:
		return usagef("--param is required")
	}
	if err := c.checkBy(); err != nil {
		return err
	}
	var err error
	if c.set, c.unset, err = paramArgs(cmd, params); err != nil {
		return err
	}
	return ledger.ValidateTenantParams(c.Tenant, c.set, c.unset)
}

func (c *paramChange) apply(ctx context.Context, e *env, s *services, cmd string, names []string) error {
	err := s.store.SetTenantParams(asCLI(ctx, c.By, cliRoleAdmin), c.Tenant, c.set, c.unset, c.Force)
	if ledger.ErrorCode(err) == ledger.EConflict {
		return ledger.Errorf(ledger.EConflict, "%s (--force)", ledger.ErrorMessage(err))
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "%s %s for tenant %s\n", cmd, strings.Join(names, ", "), c.Tenant)
	return nil
}

type tenantSet struct {
	paramChange `embed:""`
	// Checked after parsing, not by kong, whose error would quote a
	// refused value.
	Param []string `sep:"none" help:"NAME=VALUE to set (repeatable)"`
}

func (c *tenantSet) check() error { return c.checkChange("set", c.Param) }

func (c *tenantSet) runLedger(ctx context.Context, e *env, s *services) error {
	names := make([]string, 0, len(c.Param))
	for _, p := range c.Param {
		n, _, _ := strings.Cut(p, "=")
		names = append(names, n)
	}
	return c.apply(ctx, e, s, "set", names)
}

type tenantUnset struct {
	paramChange `embed:""`
	Param       []string `sep:"none" help:"NAME to remove (repeatable)"`
}

func (c *tenantUnset) check() error { return c.checkChange("unset", c.Param) }

func (c *tenantUnset) runLedger(ctx context.Context, e *env, s *services) error {
	return c.apply(ctx, e, s, "unset", c.unset)
}

type tenantShow struct {
	tenantName `embed:""`
	Format     string `default:"text" help:"text (a table) or json"`
}

func (c *tenantShow) check() error {
	if err := c.checkName(); err != nil {
		return err
	}
	if c.Format != "text" && c.Format != "json" {
		return usagef("--format must be text or json")
	}
	return validTenant(c.Tenant)
}

func (c *tenantShow) runLedger(ctx context.Context, e *env, s *services) error {
	list, err := s.store.ListTenantParams(ctx, c.Tenant)
	if err != nil {
		return err
	}
	return showParams(e.stdout, c.Tenant, list, c.Format)
}

// paramArgs reads the --param arguments of set (NAME=VALUE) or unset
// (NAME). A malformed one is a usage error that names the flag but never
// quotes the argument, which may be a value.
func paramArgs(cmd string, params []string) (map[string]string, []string, error) {
	set := map[string]string{}
	var unset []string
	seen := map[string]bool{}
	for i, p := range params {
		n, v, hasValue := strings.Cut(p, "=")
		switch {
		case cmd == "set" && (!hasValue || n == ""):
			return nil, nil, usagef("--param #%d must be NAME=VALUE", i+1)
		case cmd == "unset" && hasValue:
			return nil, nil, usagef("--param #%d must be a NAME alone, without =VALUE", i+1)
		case seen[n] && ledger.ValidTenantParamName(n):
			return nil, nil, usagef("--param %s is given twice", n)
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

type tenantErase struct {
	tenantName `embed:""`
	Force      bool `help:"erase even while operations are not yet final"`
	byOption   `embed:""`
}

func (c *tenantErase) check() error {
	if err := errors.Join(c.checkName(), c.checkBy()); err != nil {
		return err
	}
	return validTenant(c.Tenant)
}

func (c *tenantErase) runLedger(ctx context.Context, e *env, s *services) error {
	st, name, by, force, stdout := s.store, &c.Tenant, &c.By, &c.Force, e.stdout
	er, err := st.EraseTenant(asCLI(ctx, *by, cliRoleAdmin), *name, *force)
	if ledger.ErrorCode(err) == ledger.EConflict {
		return ledger.Errorf(ledger.EConflict, "%s (--force)", ledger.ErrorMessage(err))
	}
	if err != nil {
		return err
	}
	heading := fmt.Sprintf("settle tenant erase: tenant %s erased by %s (erasure %d)", *name, er.Subject, er.ID)
	if er.Forced && er.Unfinished > 0 {
		heading += fmt.Sprintf(", forced with %d not yet final", er.Unfinished)
	}
	return printCounts(stdout, heading, er.Counts, erasureKinds)
}

// erasureKinds are the kinds a tenant's erasure removes, in print order.
var erasureKinds = []string{"operations", "events", "notifications", "findings", "resolutions", "conflicts",
	"tokens", "callbacks", "params", "quarantine", "deliveries", "actions", "rollups"}
