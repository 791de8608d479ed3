package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"settle/ledger"
)

const quarantineUsage = `usage: settle quarantine <list|resolve> [flags]

  settle quarantine list [--all] [--tenant T]                  open items (--all: resolved ones too)
  settle quarantine resolve ID --by NAME --note TEXT [--tenant T]
                                                               close an item after review

  An item belongs to the tenant of the operation it concerns, else to the
  tenant the event claims; an item with neither is unattributed. list
  shows every tenant's items and the unattributed ones, or only tenant T's.
  resolve finds the open item in whichever tenant holds it, or only in
  tenant T's when given; it is recorded as an action of cli:NAME in role
  owner.
`

// quarantine lists and resolves quarantined inbound events. Resolving
// records who decided what; it never changes an operation — a person who
// decides an event proves an outcome acts through the escalation path.
func quarantine(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && isHelp(args[0]) {
		fmt.Fprint(stdout, quarantineUsage)
		return errHelp
	}
	if len(args) == 0 || (args[0] != "list" && args[0] != "resolve") {
		fmt.Fprint(stderr, quarantineUsage)
		return errUsage
	}
	fs := withUsage(flag.NewFlagSet("settle quarantine "+args[0], flag.ContinueOnError), quarantineUsage)
	dbURL := dbFlag(fs)
	all := fs.Bool("all", false, "include resolved items")
	by := byFlag(fs, false)
	tenant := fs.String("tenant", "", "only this tenant's items")
	note := fs.String("note", "", "the decision (required for resolve)")
	pos, err := parseInterspersed(fs, args[1:], stdout, stderr)
	if err != nil {
		return err
	}
	var id int64
	if args[0] == "resolve" {
		if len(pos) != 1 || *by == "" || *note == "" {
			fmt.Fprint(stderr, quarantineUsage)
			return errUsage
		}
		if id, err = strconv.ParseInt(pos[0], 10, 64); err != nil {
			fmt.Fprintf(stderr, "quarantine item id must be a number, got %q\n", pos[0])
			return errUsage
		}
	} else if len(pos) != 0 {
		fmt.Fprint(stderr, quarantineUsage)
		return errUsage
	}
	store, _, err := openStore(ctx, *dbURL, stderr)
	if err != nil {
		return err
	}
	defer store.Close()

	filter := ledger.QuarantineFilter{Open: !*all, AllTenants: true, Unattributed: true}
	if *tenant != "" {
		filter = ledger.QuarantineFilter{Open: !*all, Tenants: []string{*tenant}}
	}
	if args[0] == "resolve" {
		scope := *tenant
		if scope == "" {
			if scope, err = quarantineTenant(ctx, store, filter, id); err != nil {
				return err
			}
		}
		if err := store.ResolveQuarantine(asCLI(ctx, *by, cliRoleOwner), scope, id, *note); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "resolved %d\n", id)
		return nil
	}
	items, err := store.ListQuarantine(ctx, filter)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tTARGET\tAT\tREASON\tEVENT\tCLAIMED TENANT\tREFERENCE\tREMOTE ID\tOPERATION\tRESOLVED")
	for _, q := range items {
		resolved := "-"
		if q.ResolvedAt != nil {
			resolved = fmt.Sprintf("%s by %s: %s", q.ResolvedAt.Format(time.RFC3339), shown(personName(q.ResolvedByName, q.ResolvedBy)), shown(q.Resolution))
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", q.ID, shown(q.Target), q.At.Format(time.RFC3339),
			shown(q.Reason), dash(q.EventID), dash(q.Tenant), dash(q.Reference), dash(q.RemoteID), dash(q.OperationID), resolved)
	}
	return w.Flush()
}

// quarantineTenant finds the tenant an open item belongs to among the
// newest open items (ledger.MaxQuarantineList) f selects: the operator,
// trusted with every tenant, names only the item. ENotFound when no open
// item has that id there.
func quarantineTenant(ctx context.Context, store store, f ledger.QuarantineFilter, id int64) (string, error) {
	f.Open = true
	items, err := store.ListQuarantine(ctx, f)
	if err != nil {
		return "", err
	}
	for _, q := range items {
		if q.ID == id {
			return q.ScopeTenant(), nil
		}
	}
	return "", ledger.Errorf(ledger.ENotFound, "no open quarantine item %d", id)
}
