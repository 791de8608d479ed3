package main

import (
	"context"
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	"settle/ledger"
	"settle/resolve"
)

// quarantineCmd lists and resolves quarantined inbound events. Resolving
// records who decided what; it never changes an operation — a person who
// decides an event proves an outcome acts through the escalation path.
type quarantineCmd struct {
	List    quarantineList    `cmd:"" help:"open items (--all: resolved ones too)"`
	Resolve quarantineResolve `cmd:"" help:"close an item after review"`
}

// Help is the detail of settle quarantine --help.
func (quarantineCmd) Help() string {
	return `An item belongs to the tenant of the operation it concerns, else to the
tenant the event claims; an item with neither is unattributed. list
shows every tenant's items and the unattributed ones, or only tenant T's.
resolve finds the open item in whichever tenant holds it, or only in
tenant T's when given; it is recorded as an action of cli:NAME in role
owner.`
}

type quarantineOptions struct {
	dbOption `embed:""`
	Tenant   string `help:"only this tenant's items"`
}

func (o quarantineOptions) filter(all bool) ledger.QuarantineFilter {
	if o.Tenant != "" {
		return ledger.QuarantineFilter{Open: !all, Tenants: []string{o.Tenant}}
	}
	return ledger.QuarantineFilter{Open: !all, AllTenants: true, Unattributed: true}
}

type quarantineList struct {
	quarantineOptions `embed:""`
	All               bool `help:"include resolved items"`
}

func (c *quarantineList) runLedger(ctx context.Context, e *env, s *services) error {
	items, err := s.store.ListQuarantine(ctx, c.filter(c.All))
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
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

type quarantineResolve struct {
	Item              string `arg:"" help:"the item's id (settle quarantine list)"`
	quarantineOptions `embed:""`
	By                string `help:"who decides, recorded as cli:NAME (required)"`
	Note              string `help:"the decision (required)"`
	id                int64
}

func (c *quarantineResolve) check() error {
	switch {
	case c.By == "":
		return usagef("--by is required (who decides)")
	case c.Note == "":
		return usagef("--note is required (the decision)")
	}
	id, err := strconv.ParseInt(c.Item, 10, 64)
	if err != nil {
		return usagef("quarantine item id must be a number, got %q", c.Item)
	}
	c.id = id
	return nil
}

func (c *quarantineResolve) runLedger(ctx context.Context, e *env, s *services) error {
	scope := c.Tenant
	if scope == "" {
		var err error
		if scope, err = quarantineTenant(ctx, s.store, c.filter(false), c.id); err != nil {
			return err
		}
	}
	// The console's dismissal, with its checks, for an operator trusted
	// with every tenant.
	err := resolve.NewQuarantine(s.store).Dismiss(asCLI(ctx, c.By, cliRoleOwner), resolve.Operator{}, scope, c.id, c.Note)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "resolved %d\n", c.id)
	return nil
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
