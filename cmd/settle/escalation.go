package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"settle/ledger"
	"settle/resolve"
	"settle/target"
)

// escalationCmd works the escalation queue from the command line through
// the same service as the console (resolve.Service): the same checks, the
// same queue, the same four questions.
type escalationCmd struct {
	Queue    escalationQueue    `cmd:"" help:"the escalation queue: ESCALATED operations and UNKNOWN ones past their deadline, a page at a time"`
	List     escalationList     `cmd:"" help:"the queue and the tenant's proposals (--all: decided ones too)"`
	Show     escalationShow     `cmd:"" help:"the runbook's four questions about one operation, from settle's evidence"`
	Propose  escalationPropose  `cmd:"" help:"propose how an ESCALATED operation ended: confirm, not-applied, replay or supersede"`
	Approve  escalationApprove  `cmd:"" help:"approve a proposal (a different person than the proposer)"`
	Reject   escalationReject   `cmd:"" help:"reject a proposal, with the reason"`
	Withdraw escalationWithdraw `cmd:"" help:"withdraw your own proposal"`
	Notices  escalationNotices  `cmd:"" help:"the escalation notices to owning teams given up after --callback-max-attempts; --retry queues them again"`
}

// Help is the detail of settle escalation --help.
func (escalationCmd) Help() string {
	return `The rules are the console's (package resolve): "confirm" is checked by a
lookup at the target, a replay only inside its window less the request
timeout and the replay margin, a supersede only when a lookup finds
nothing and the absence rules hold. settle asks targets with the
contracts --contracts names (env SETTLE_CONTRACTS) and the credentials
and tenant parameters settle serve uses; without a target's contract,
"confirm" is taken on the two people's word and replay and supersede
are refused, as in the console.

--as PERSON names the console person you act as, as the event log shows
them (oidc:<subject> or demo:<user>); settle must know them: they have
signed in to the console or acted in the tenant there. The record is
"cli:<your OS user> as PERSON", in role owner; the two-person rule
compares the person, so nobody approves their own proposal, made here
or in the console.`
}

// escalationOptions are the flags every escalation command takes.
type escalationOptions struct {
	dbOption  `embed:""`
	Tenant    string `help:"the tenant (required)"`
	Contracts string `env:"SETTLE_CONTRACTS" help:"target contracts file, for settle to check a proposal with the target"`
	By        string `hidden:"" help:"no longer accepted: use --as"`
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

// service is the owners' service over the store, with the contracts.
func (o escalationOptions) service(s *services) (*resolve.Service, resolve.Scope, error) {
	var set *target.Set
	if o.Contracts != "" {
		var err error
		if set, err = target.Load(o.Contracts); err != nil {
			return nil, nil, err
		}
	}
	svc, err := resolveService(s.store, set)
	return svc, resolve.TenantScope(o.Tenant), err
}

// decision is what acting on the queue takes besides the tenant.
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

// act returns the service and the context of the person acting.
func (d decision) act(ctx context.Context, s *services) (*resolve.Service, resolve.Scope, context.Context, error) {
	svc, sc, err := d.service(s)
	if err != nil {
		return nil, nil, nil, err
	}
	actx, err := asPerson(ctx, s.store, d.Tenant, d.As)
	return svc, sc, actx, err
}

type escalationQueue struct {
	escalationOptions `embed:""`
	Target            string `help:"only this target"`
	Show              string `help:"escalated or overdue (default both)"`
	Sort              string `help:"newest (default oldest first)"`
	Ref               string `help:"only operations carrying this reference (id or id prefix, intent or remote reference)"`
	Limit             int    `help:"operations per page (default 100)"`
	Cursor            string `help:"continue after the page that printed this cursor"`
}

func (c *escalationQueue) check() error { return c.checkTenant() }

func (c *escalationQueue) runLedger(ctx context.Context, e *env, s *services) error {
	svc, sc, err := c.service(s)
	if err != nil {
		return err
	}
	return printQueue(ctx, svc, sc, resolve.QueueFilter{Tenant: c.Tenant, Target: c.Target, Show: resolve.Show(c.Show),
		Order: resolve.Order(c.Sort), Ref: c.Ref, Limit: c.Limit, Cursor: c.Cursor}, e.stdout)
}

type escalationList struct {
	escalationOptions `embed:""`
	All               bool `help:"list decided proposals too"`
}

func (c *escalationList) check() error { return c.checkTenant() }

func (c *escalationList) runLedger(ctx context.Context, e *env, s *services) error {
	svc, sc, err := c.service(s)
	if err != nil {
		return err
	}
	return listEscalations(ctx, svc, s.store, sc, c.Tenant, c.All, e.stdout)
}

type escalationShow struct {
	Operation         string `arg:"" help:"the operation's id"`
	escalationOptions `embed:""`
}

func (c *escalationShow) check() error { return c.checkTenant() }

func (c *escalationShow) runLedger(ctx context.Context, e *env, s *services) error {
	svc, sc, err := c.service(s)
	if err != nil {
		return err
	}
	return showCase(ctx, svc, sc, c.Tenant, c.Operation, e.stdout)
}

// kindNames are the CLI's words for the kinds of proposal.
var kindNames = map[string]ledger.ResolutionKind{
	"confirm": ledger.KindConfirmSucceeded, "not-applied": ledger.KindConfirmNotApplied,
	"replay": ledger.KindReplay, "supersede": ledger.KindSupersede,
}

type escalationPropose struct {
	Operation string `arg:"" help:"the ESCALATED operation's id"`
	decision  `embed:""`
	Kind      string `help:"what happened: confirm (the target holds the object), not-applied, replay (one same-key replay) or supersede"`
	To        string `hidden:"" help:"no longer accepted: use --kind"`
	RemoteRef string `name:"remote-ref" help:"the target's object id (confirm only)"`
	Reason    string `help:"the evidence relied on"`
	// Despite is the console's checkbox: the same rule, in resolve.
	Despite bool `name:"despite-evidence" help:"propose it although the evidence settle holds contradicts it (escalation show lists the warnings)"`
}

func (c *escalationPropose) check() error {
	if c.To != "" {
		return usagef("--to is no longer accepted: say what happened with --kind confirm|not-applied|replay|supersede")
	}
	if _, ok := kindNames[c.Kind]; !ok {
		return usagef("--kind must be confirm, not-applied, replay or supersede, got %s", shown(c.Kind))
	}
	return c.checkDecision()
}

func (c *escalationPropose) runLedger(ctx context.Context, e *env, s *services) error {
	svc, sc, actx, err := c.act(ctx, s)
	if err != nil {
		return err
	}
	if op, err := svc.Operation(ctx, sc, c.Tenant, c.Operation); err == nil && svc.Contract(op.Target) == nil {
		fmt.Fprintf(e.stderr, "settle: warning: no contract for target %s is loaded (--contracts): settle cannot check this proposal with the target\n", shown(op.Target))
	}
	r, err := svc.Propose(actx, sc, c.Tenant, c.Operation, resolve.Proposal{Kind: kindNames[c.Kind], RemoteRef: c.RemoteRef, Reason: c.Reason,
		DespiteEvidence: c.Despite})
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "proposal %d: %s → %s, awaiting approval by someone other than %s\n", r.ID, shown(r.OperationID),
		shown(string(r.To)), shown(personName(r.ProposedByName, r.ProposedBy)))
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
	// The console's two checkboxes: the same rules, in resolve.
	Despite bool `name:"despite-evidence" help:"approve it although the evidence settle holds contradicts it (escalation show lists the warnings)"`
	Checked bool `name:"checked-at-target" help:"you checked the proposal's object id at the target yourself (required for confirm on a target without lookup)"`
}

func (c *escalationApprove) check() error { return errors.Join(c.checkDecision(), c.checkID()) }

func (c *escalationApprove) runLedger(ctx context.Context, e *env, s *services) error {
	svc, sc, actx, err := c.act(ctx, s)
	if err != nil {
		return err
	}
	d, err := svc.Approve(actx, sc, c.Tenant, c.id, resolve.Approval{DespiteEvidence: c.Despite, CheckedAtTarget: c.Checked})
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "approved %d: operation %s is %s\n", c.id, shown(d.Operation.ID), shown(string(d.Operation.State)))
	if d.Successor.ID != "" {
		fmt.Fprintf(e.stdout, "superseded by operation %s (intent %s)\n", shown(d.Successor.ID), shown(d.Successor.IntentRef))
	}
	return nil
}

type escalationReject struct {
	proposalID `embed:""`
	decision   `embed:""`
	Reason     string `help:"why the proposal is rejected"`
}

func (c *escalationReject) check() error { return errors.Join(c.checkDecision(), c.checkID()) }

func (c *escalationReject) runLedger(ctx context.Context, e *env, s *services) error {
	svc, sc, actx, err := c.act(ctx, s)
	if err != nil {
		return err
	}
	if err := svc.Reject(actx, sc, c.Tenant, c.id, c.Reason); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "rejected %d\n", c.id)
	return nil
}

type escalationWithdraw struct {
	proposalID `embed:""`
	decision   `embed:""`
	Reason     string `help:"why you withdraw it"`
}

func (c *escalationWithdraw) check() error { return errors.Join(c.checkDecision(), c.checkID()) }

func (c *escalationWithdraw) runLedger(ctx context.Context, e *env, s *services) error {
	svc, sc, actx, err := c.act(ctx, s)
	if err != nil {
		return err
	}
	if err := svc.Withdraw(actx, sc, c.Tenant, c.id, c.Reason); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "withdrew %d\n", c.id)
	return nil
}

type escalationNotices struct {
	escalationOptions `embed:""`
	Retry             bool `help:"queue the given-up notices again, due now, with a fresh count of attempts; recorded as an action of cli:<your OS user> in role admin"`
}

func (c *escalationNotices) check() error { return c.checkTenant() }

func (c *escalationNotices) runLedger(ctx context.Context, e *env, s *services) error {
	return escalationNoticesOf(ctx, s.store, c.Tenant, c.Retry, e.stdout)
}

// resolveService builds the owners' service over st, asking targets with
// the contracts' credentials (from the environment, as settle serve reads
// them) and the tenants' parameters in st.
func resolveService(st store, set *target.Set) (*resolve.Service, error) {
	var contracts resolve.Contracts
	opts := target.ClientOptions{Params: st}
	if set != nil {
		secrets, err := target.ReadSecrets(set, os.Getenv)
		if err != nil {
			return nil, err
		}
		contracts, opts.Secrets = set, secrets
	}
	return resolve.New(st, contracts, target.NewClient(opts), time.Now), nil
}

// printQueue prints one page of the escalation queue (resolve.Queue).
func printQueue(ctx context.Context, svc *resolve.Service, sc resolve.Scope, f resolve.QueueFilter, w io.Writer) error {
	q, err := svc.Queue(ctx, sc, f)
	if err != nil {
		return err
	}
	now := svc.Now()
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "OPERATION\tSTATE\tTARGET\tINTENT\tAGE\tDEADLINE\tPROPOSAL\tREASON")
	for _, it := range q.Items {
		op := it.Operation
		state := string(op.State)
		if it.Overdue {
			state += " (overdue)"
		}
		deadline := "-"
		if op.Deadline != nil {
			deadline = op.Deadline.Format(time.RFC3339)
		}
		proposal := "-"
		if it.Open != nil {
			proposal = fmt.Sprintf("%d %s", it.Open.ID, kindName(it.Open.Kind))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", shown(op.ID), state, shown(op.Target), shown(op.IntentRef),
			now.Sub(op.CreatedAt).Round(time.Second), deadline, proposal, dash(op.Reason))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if q.Next != "" {
		fmt.Fprintf(w, "\nnext page: --cursor %s\n", q.Next)
	}
	return nil
}

// listEscalations prints the tenant's queue and its proposals (open ones,
// or all).
func listEscalations(ctx context.Context, svc *resolve.Service, st store, sc resolve.Scope, tenant string, all bool, w io.Writer) error {
	if err := printQueue(ctx, svc, sc, resolve.QueueFilter{Tenant: tenant, Limit: ledger.MaxListLimit}, w); err != nil {
		return err
	}
	proposals, err := st.Resolutions(ctx, tenant, !all)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nPROPOSAL\tOPERATION\tKIND\tTO\tREMOTE REF\tBY\tDECISION")
	for _, r := range proposals {
		decision := "open"
		if r.Decision != "" {
			decision = fmt.Sprintf("%s by %s %s", shown(r.Decision), shown(personName(r.DecidedByName, r.DecidedBy)), shown(r.DecisionWhy))
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, shown(r.OperationID), shown(string(r.Kind)), shown(string(r.To)),
			dash(r.RemoteRef), shown(personName(r.ProposedByName, r.ProposedBy)), decision)
	}
	return tw.Flush()
}

// showCase prints the runbook's four questions about one operation, as
// the console's escalation page answers them.
func showCase(ctx context.Context, svc *resolve.Service, sc resolve.Scope, tenant, id string, w io.Writer) error {
	k, err := svc.Case(ctx, sc, tenant, id)
	if err != nil {
		return err
	}
	op := k.Operation
	fmt.Fprintf(w, "operation %s of tenant %s, target %s, intent %s: %s\n\n", shown(op.ID), shown(op.Tenant), shown(op.Target),
		shown(op.IntentRef), op.State)
	fmt.Fprintln(w, "1. What does the target say happened?")
	switch {
	case k.Said.Event != nil:
		ev := k.Said.Event
		fmt.Fprintf(w, "   %s: %s → %s, %s\n", ev.At.Format(time.RFC3339), ev.From, ev.To, dash(ev.Reason))
	case k.Said.Quarantined != nil:
		qi := k.Said.Quarantined
		fmt.Fprintf(w, "   nothing in the log; a quarantined event names it (%s): %s, event %s, object %s\n",
			qi.At.Format(time.RFC3339), dash(qi.Reason), dash(qi.EventID), dash(qi.RemoteID))
	default:
		fmt.Fprintf(w, "   nothing: settle has no answer from %s about this operation\n", shown(op.Target))
	}
	fmt.Fprintln(w, "2. Does it match the approved request?")
	switch m := k.Match; {
	case m.Known && m.Matched:
		fmt.Fprintf(w, "   yes: object %s matched every field the contract compares\n", shown(m.RemoteID))
	case m.Known:
		fmt.Fprintf(w, "   no: these fields differ: %s\n", shown(strings.Join(m.Mismatched, ", ")))
	case m.Named != nil:
		fmt.Fprintf(w, "   not known: a quarantined event names object %s, unchecked; compare it at the target\n", shown(m.RemoteID))
	case m.Shown != nil:
		fmt.Fprintf(w, "   not known: %s shows object %s, not compared; compare it at the target\n", resolve.Describe(*m.Shown), shown(m.RemoteID))
	default:
		fmt.Fprintln(w, "   not known: the target has shown no object to compare")
	}
	fmt.Fprintln(w, "3. Is a same-key replay still inside the documented window?")
	if k.Replay.Possible {
		fmt.Fprintf(w, "   yes, until %s (window %s less timeout %s and margin %s)\n", k.Replay.By.Format(time.RFC3339),
			k.Replay.Window, k.Replay.Timeout, k.Replay.Margin)
	} else {
		fmt.Fprintf(w, "   no: %s\n", k.Replay.Why)
	}
	fmt.Fprintln(w, "4. Who may approve?")
	if k.Open != nil {
		fmt.Fprintf(w, "   another owner of %s in %s, not %s, who proposed %d (%s)\n", shown(op.Target), shown(op.Tenant),
			shown(personName(k.Open.ProposedByName, k.Open.ProposedBy)), k.Open.ID, kindName(k.Open.Kind))
	} else {
		fmt.Fprintf(w, "   another owner of %s in %s: never the person who proposes\n", shown(op.Target), shown(op.Tenant))
	}
	if k.Approver.Team != "" {
		fmt.Fprintf(w, "   owning team %s, escalation contact %s\n", shown(k.Approver.Team), shown(k.Approver.Contact))
	}
	if len(k.Evidence) > 0 {
		fmt.Fprintln(w, "\nevidence, newest first:")
		for _, e := range k.Evidence {
			fmt.Fprintf(w, "   %s: object %s, status %s, %s\n", resolve.Describe(e), dash(e.RemoteID), dash(e.Status), comparedWords(e))
		}
	}
	for _, warn := range k.Warnings {
		fmt.Fprintf(w, "\nwarning: %s (approve with --despite-evidence)\n", warn)
	}
	if k.Unverifiable != "" {
		fmt.Fprintf(w, "\n%s (approve with --checked-at-target)\n", k.Unverifiable)
	}
	for _, no := range k.NotOffered {
		fmt.Fprintf(w, "\n%s\n", no.Why)
	}
	if len(k.Kinds) > 0 {
		var names []string
		for _, kind := range k.Kinds {
			names = append(names, kindName(kind))
		}
		fmt.Fprintf(w, "\nmay be proposed now: --kind %s\n", strings.Join(names, "|"))
	} else if k.NoPropose != "" {
		fmt.Fprintf(w, "\n%s\n", k.NoPropose)
	}
	return nil
}

// comparedWords says how an object of the evidence compared.
func comparedWords(e resolve.Seen) string {
	switch e.Compared {
	case resolve.Matched:
		return "matched the approved request"
	case resolve.Mismatched:
		return "differs in " + shown(strings.Join(e.Mismatched, ", "))
	}
	return "not compared"
}

// kindName is the CLI's word for a kind of proposal.
func kindName(k ledger.ResolutionKind) string {
	for name, kind := range kindNames {
		if kind == k {
			return name
		}
	}
	return string(k)
}

// personName is how a person is shown: their display name, or their
// subject when the record has no name.
func personName(name, subject string) string {
	if name != "" {
		return name
	}
	return subject
}

// escalationNoticesOf prints the tenant's escalation notices given up after
// the bound on attempts, as `settle callback show` prints given-up
// callbacks, or with retry queues them again.
func escalationNoticesOf(ctx context.Context, store store, tenant string, retry bool, w io.Writer) error {
	if !ledger.ValidTenant(tenant) {
		return ledger.Errorf(ledger.EInvalid, "tenant must be 1-63 characters of a-z, 0-9, '.', '_' or '-'")
	}
	if retry {
		// Recorded as the action escalation_notice.retry of the OS user.
		u, err := user.Current()
		if err != nil || u.Username == "" {
			return fmt.Errorf("cannot tell which operating-system user runs this command, to record the retry")
		}
		k, err := store.RetryGivenUpEscalationNotices(asCLI(ctx, u.Username, cliRoleAdmin), tenant, time.Now())
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "queued %d given-up escalation notice(s) of tenant %s again\n", k, tenant)
		return nil
	}
	g, err := store.GivenUpEscalationNotices(ctx, tenant, givenUpShown)
	if err != nil {
		return err
	}
	if g.Count == 0 {
		fmt.Fprintf(w, "no escalation notice of tenant %s is given up\n", tenant)
		return nil
	}
	printGivenUp(w, g, "settle escalation notices --tenant NAME --retry")
	return nil
}
