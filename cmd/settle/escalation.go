package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"settle/ledger"
)

// escalationCmd works the escalation queue from the command line: one
// person proposes how an ESCALATED operation ended, another approves it.
type escalationCmd struct {
	List    escalationList    `cmd:"" help:"the tenant's ESCALATED operations and their proposals"`
	Propose escalationPropose `cmd:"" help:"propose how an ESCALATED operation ended"`
	Approve escalationApprove `cmd:"" help:"approve a proposal (a different person than the proposer)"`
	Reject  escalationReject  `cmd:"" help:"reject a proposal, with the reason"`
}

// Help is the detail of settle escalation --help.
func (escalationCmd) Help() string {
	return `--as PERSON names the console person you act as, as the event log shows
them (oidc:<subject> or demo:<user>); settle must know them: they have
signed in to the console or acted in the tenant there. The record is
"cli:<your OS user> as PERSON", in role owner; the two-person rule
compares the person, so nobody approves their own proposal, made here
or in the console.`
}

// escalationOptions are the flags every escalation command takes.
type escalationOptions struct {
	dbOption `embed:""`
	Tenant   string `help:"the tenant (required)"`
	By       string `hidden:"" help:"no longer accepted: use --as"`
}

func (o escalationOptions) checkTenant() error {
	if o.By != "" {
		return usagef("--by is no longer accepted: the operating-system user is recorded, with --as naming the console person you act as")
	}
	if o.Tenant == "" {
		return usagef("--tenant is required")
	}
	return nil
}

// decision is what deciding a proposal takes besides the tenant.
type decision struct {
	escalationOptions `embed:""`
	As                string `help:"the console person you act as (required)"`
}

func (d decision) checkDecision() error {
	if err := d.checkTenant(); err != nil {
		return err
	}
	if d.As == "" {
		return usagef("--as is required (the console person you act as)")
	}
	return nil
}

type escalationList struct {
	escalationOptions `embed:""`
	All               bool `help:"list decided proposals too"`
}

func (c *escalationList) check() error { return c.checkTenant() }

func (c *escalationList) runLedger(ctx context.Context, e *env, s *services) error {
	return listEscalations(ctx, s.store, c.Tenant, c.All, e.stdout)
}

type escalationPropose struct {
	Operation string `arg:"" help:"the ESCALATED operation's id"`
	decision  `embed:""`
	To        string `help:"SUCCEEDED or FAILED_TERMINAL"`
	RemoteRef string `name:"remote-ref" help:"the target's object id (required for SUCCEEDED)"`
	Reason    string `help:"the evidence relied on"`
}

func (c *escalationPropose) check() error { return c.checkDecision() }

func (c *escalationPropose) runLedger(ctx context.Context, e *env, s *services) error {
	actx, err := asPerson(ctx, s.store, c.Tenant, c.As)
	if err != nil {
		return err
	}
	r, err := s.store.Propose(actx, ledger.Resolution{Tenant: c.Tenant, OperationID: c.Operation, To: ledger.State(c.To),
		RemoteRef: c.RemoteRef, Reason: c.Reason})
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "proposal %d: %s → %s, awaiting approval by someone other than %s\n", r.ID, shown(r.OperationID), shown(string(r.To)), shown(personName(r.ProposedByName, r.ProposedBy)))
	return nil
}

// proposalID is the proposal a decision is about.
type proposalID struct {
	Proposal string `arg:"" help:"the proposal's number (settle escalation list)"`
	id       int64
}

func (p *proposalID) checkID() error {
	id, err := strconv.ParseInt(p.Proposal, 10, 64)
	if err != nil {
		return usagef("proposal id must be a number, got %q", p.Proposal)
	}
	p.id = id
	return nil
}

type escalationApprove struct {
	proposalID `embed:""`
	decision   `embed:""`
}

func (c *escalationApprove) check() error { return errors.Join(c.checkDecision(), c.checkID()) }

func (c *escalationApprove) runLedger(ctx context.Context, e *env, s *services) error {
	actx, err := asPerson(ctx, s.store, c.Tenant, c.As)
	if err != nil {
		return err
	}
	op, err := s.store.Approve(actx, c.Tenant, c.id)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "approved %d: operation %s is %s\n", c.id, shown(op.ID), shown(string(op.State)))
	return nil
}

type escalationReject struct {
	proposalID `embed:""`
	decision   `embed:""`
	Reason     string `help:"why the proposal is rejected"`
}

func (c *escalationReject) check() error { return errors.Join(c.checkDecision(), c.checkID()) }

func (c *escalationReject) runLedger(ctx context.Context, e *env, s *services) error {
	actx, err := asPerson(ctx, s.store, c.Tenant, c.As)
	if err != nil {
		return err
	}
	if err := s.store.Reject(actx, c.Tenant, c.id, c.Reason); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "rejected %d\n", c.id)
	return nil
}

// listEscalations prints the tenant's escalation queue (ledger.Escalations).
func listEscalations(ctx context.Context, store store, tenant string, all bool, w io.Writer) error {
	q, err := ledger.Escalations(ctx, store, store, tenant, all)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ESCALATED OPERATION\tTARGET\tSINCE\tREASON")
	for _, op := range q.Operations {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", shown(op.ID), shown(op.Target), op.UpdatedAt.Format(time.RFC3339), dash(op.Reason))
	}
	fmt.Fprintln(tw, "\nPROPOSAL\tOPERATION\tTO\tREMOTE REF\tBY\tDECISION")
	for _, r := range q.Proposals {
		decision := "open"
		if r.Decision != "" {
			decision = fmt.Sprintf("%s by %s %s", shown(r.Decision), shown(personName(r.DecidedByName, r.DecidedBy)), shown(r.DecisionWhy))
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", r.ID, shown(r.OperationID), shown(string(r.To)), dash(r.RemoteRef),
			shown(personName(r.ProposedByName, r.ProposedBy)), decision)
	}
	return tw.Flush()
}

// personName is how a person is shown: their display name, or their
// subject when the record has no name.
func personName(name, subject string) string {
	if name != "" {
		return name
	}
	return subject
}
