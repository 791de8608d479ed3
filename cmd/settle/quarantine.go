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
	Link    quarantineLink    `cmd:"" help:"attribute an item to an operation of its tenant, as evidence"`
}

// Help is the detail of settle quarantine --help.
func (quarantineCmd) Help() string {
	return `An item belongs to the tenant of the operation it concerns, else to the
tenant the event claims; an item with neither is unattributed. list
shows every tenant's items and the unattributed ones, or only tenant T's.
resolve and link find the item in whichever tenant holds it, or only in
tenant T's when given, and are recorded as an action of cli:NAME in role
owner. link makes the event evidence on one operation of the item's
tenant, named by its id or any of its references; it never changes the
operation's state (an UNKNOWN one is looked up again at once). Both refuse
what the console refuses, in its words: an item resolved already, an
operation of another tenant, a missing reason.`
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
	scope, err := quarantineTenant(ctx, s.store, c.quarantineOptions, c.id)
	if err != nil {
		return err
	}
	// The console's dismissal, with its checks, for an operator trusted
	// with every tenant.
	q := resolve.NewQuarantine(s.store)
	err = q.Dismiss(asCLI(ctx, c.By, cliRoleOwner), resolve.Operator{}, scope, c.id, c.Note)
	if err != nil {
		return resolvedBefore(ctx, q, scope, c.id, err)
	}
	fmt.Fprintf(e.stdout, "resolved %d\n", c.id)
	return nil
}

type quarantineLink struct {
	quarantineOptions `embed:""`
	byOption          `embed:""`
	ID                int64  `name:"id" required:"" placeholder:"N" help:"the item's id (settle quarantine list)"`
	Operation         string `placeholder:"OPID" help:"the operation of the item's tenant: its id or one of its references"`
	Reason            string `help:"why the event belongs to the operation (required)"`
}

func (c *quarantineLink) check() error { return c.checkBy() }

func (c *quarantineLink) runLedger(ctx context.Context, e *env, s *services) error {
	scope, err := quarantineTenant(ctx, s.store, c.quarantineOptions, c.ID)
	if err != nil {
		return err
	}
	// The console's link, with its checks (the operation must be the
	// item's tenant's, the reason given), for an operator trusted with
	// every tenant.
	q := resolve.NewQuarantine(s.store)
	op, err := q.Link(asCLI(ctx, c.By, cliRoleOwner), resolve.Operator{}, scope, c.ID, c.Operation, c.Reason)
	if err != nil {
		return resolvedBefore(ctx, q, scope, c.ID, err)
	}
	fmt.Fprintf(e.stdout, "linked %d to operation %s\n", c.ID, op.ID)
	return nil
}

// quarantineTenant is the tenant item id belongs to: o's tenant when
// given, else the scope of the item of that id among those o's filter
// selects, open or resolved (so that a resolved item is refused as
// resolved, not as unknown). ENotFound when there is none.
func quarantineTenant(ctx context.Context, store store, o quarantineOptions, id int64) (string, error) {
	if o.Tenant != "" {
		return o.Tenant, nil
	}
	// The keyset cursor makes this one row: the item of the largest id
	// below id+1, which is id's when it exists.
	f := o.filter(true)
	f.After, f.Limit = id+1, 1
	items, err := store.ListQuarantine(ctx, f)
	if err != nil {
		return "", err
	}
	if len(items) == 0 || items[0].ID != id {
		return "", ledger.Errorf(ledger.ENotFound, "no such quarantined event") // the review's words
	}
	return items[0].ScopeTenant(), nil
}

// resolvedBefore adds to the review's refusal of an item resolved
// already what the console's item page shows beside it: how, by whom and
// when. Other errors are returned as they are.
func resolvedBefore(ctx context.Context, q *resolve.Quarantine, tenant string, id int64, err error) error {
	if ledger.ErrorCode(err) != ledger.EConflict {
		return err
	}
	it, ierr := q.Item(ctx, resolve.Operator{}, tenant, id)
	if ierr != nil || it.ResolvedAt == nil {
		return err
	}
	how := "dismissed"
	if it.ResolvedAs == ledger.QuarantineLinked {
		how = "linked to operation " + it.OperationID
	}
	return ledger.Errorf(ledger.EConflict, "%s It was %s by %s at %s.", ledger.ErrorMessage(err), how,
		personName(it.ResolvedByName, it.ResolvedBy), it.ResolvedAt.UTC().Format(time.RFC3339))
}
