package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"settle/ledger"
	"settle/resolve"
	"settle/target"
)

const escalationUsage = `usage: settle escalation <verb> --tenant NAME [flags]

  settle escalation queue     --tenant T [--target X] [--show escalated|overdue] [--sort deadline|newest] [--limit N] [--cursor C]
  settle escalation list      --tenant T [--all]     (the queue and the open proposals; --all: decided ones too)
  settle escalation show      --tenant T OPERATION   (the runbook's four questions, from settle's evidence)
  settle escalation propose   --tenant T OPERATION --kind confirm|not-applied|replay|supersede [--remote-ref ID] --reason TEXT --as PERSON
  settle escalation approve   --tenant T PROPOSAL --as PERSON    (a different person than the proposer)
  settle escalation reject    --tenant T PROPOSAL --as PERSON --reason TEXT
  settle escalation withdraw  --tenant T PROPOSAL --as PERSON [--reason TEXT]   (the proposer only)
  settle escalation notices   --tenant T [--retry]
      print the notices to owning teams given up after settle serve's
      --callback-max-attempts; --retry queues them again, due now

  The rules are the console's (package resolve): "confirm" is checked by a
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
  or in the console.
`

// kindNames are the CLI's words for the kinds of proposal.
var kindNames = map[string]ledger.ResolutionKind{
	"confirm": ledger.KindConfirmSucceeded, "not-applied": ledger.KindConfirmNotApplied,
	"replay": ledger.KindReplay, "supersede": ledger.KindSupersede,
}

// escalation works the escalation queue from the command line through the
// same service as the console (resolve.Service).
func escalation(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	verbs := map[string]int{"queue": 0, "list": 0, "show": 1, "propose": 1, "approve": 1, "reject": 1, "withdraw": 1, "notices": 0}
	if len(args) > 0 && isHelp(args[0]) {
		fmt.Fprint(stdout, escalationUsage)
		return errHelp
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, escalationUsage)
		return errUsage
	}
	verb := args[0]
	wantPos, ok := verbs[verb]
	if !ok {
		fmt.Fprint(stderr, escalationUsage)
		return errUsage
	}
	fs := withUsage(flag.NewFlagSet("settle escalation "+verb, flag.ContinueOnError), escalationUsage)
	dbURL := dbFlag(fs)
	contractsPath := fs.String("contracts", os.Getenv("SETTLE_CONTRACTS"), "target contracts file (env SETTLE_CONTRACTS)")
	tenant := fs.String("tenant", "", "the tenant (required)")
	all := fs.Bool("all", false, "list decided proposals too")
	retry := fs.Bool("retry", false, "queue the given-up notices again (notices)")
	kind := fs.String("kind", "", "confirm, not-applied, replay or supersede")
	ref := fs.String("remote-ref", "", "the target's object id (confirm only)")
	reason := fs.String("reason", "", "the evidence relied on, or why a proposal is rejected or withdrawn")
	as := fs.String("as", "", "the console person you act as (required to act)")
	by := fs.String("by", "", "no longer accepted: use --as")
	to := fs.String("to", "", "no longer accepted: use --kind")
	var q resolve.QueueFilter
	fs.StringVar(&q.Target, "target", "", "queue: only this target")
	show := fs.String("show", "", "queue: escalated or overdue (default both)")
	sortBy := fs.String("sort", "", "queue: deadline or newest (default oldest first)")
	fs.IntVar(&q.Limit, "limit", 0, "queue: operations per page (default 100)")
	fs.StringVar(&q.Cursor, "cursor", "", "queue: continue after the page that printed this cursor")
	pos, err := parseInterspersed(fs, args[1:], stdout, stderr)
	if err != nil {
		return err
	}
	switch {
	case *by != "":
		fmt.Fprintf(stderr, "--by is no longer accepted: the operating-system user is recorded, with --as naming the console person you act as\n%s", escalationUsage)
		return errUsage
	case *to != "":
		fmt.Fprintf(stderr, "--to is no longer accepted: say what happened with --kind confirm|not-applied|replay|supersede\n%s", escalationUsage)
		return errUsage
	}
	acts := verb != "queue" && verb != "list" && verb != "show" && verb != "notices"
	if *tenant == "" || len(pos) != wantPos || (acts && *as == "") || (*retry && verb != "notices") {
		fmt.Fprint(stderr, escalationUsage)
		return errUsage
	}
	var id int64
	if verb == "approve" || verb == "reject" || verb == "withdraw" {
		if id, err = strconv.ParseInt(pos[0], 10, 64); err != nil {
			fmt.Fprintf(stderr, "proposal id must be a number, got %q\n", pos[0])
			return errUsage
		}
	}
	k, known := kindNames[*kind]
	if verb == "propose" && !known {
		fmt.Fprintf(stderr, "--kind must be confirm, not-applied, replay or supersede, got %s\n", shown(*kind))
		return errUsage
	}
	q.Tenant, q.Show, q.Order = *tenant, resolve.Show(*show), resolve.Order(*sortBy)
	var set *target.Set
	if *contractsPath != "" {
		if set, err = target.Load(*contractsPath); err != nil {
			return err
		}
	}
	st, _, err := openStore(ctx, *dbURL, stderr)
	if err != nil {
		return err
	}
	defer st.Close()
	svc, err := resolveService(st, set)
	if err != nil {
		return err
	}
	sc := resolve.TenantScope(*tenant)
	switch verb {
	case "queue":
		return printQueue(ctx, svc, sc, q, stdout)
	case "list":
		return listEscalations(ctx, svc, st, sc, *tenant, *all, stdout)
	case "show":
		return showCase(ctx, svc, sc, *tenant, pos[0], stdout)
	case "notices":
		return escalationNotices(ctx, st, *tenant, *retry, stdout)
	}
	actx, err := asPerson(ctx, st, *tenant, *as)
	if err != nil {
		return err
	}
	switch verb {
	case "propose":
		op, err := svc.Operation(ctx, sc, *tenant, pos[0])
		if err == nil && svc.Contract(op.Target) == nil {
			fmt.Fprintf(stderr, "settle: warning: no contract for target %s is loaded (--contracts): settle cannot check this proposal with the target\n", shown(op.Target))
		}
		r, err := svc.Propose(actx, sc, *tenant, pos[0], resolve.Proposal{Kind: k, RemoteRef: *ref, Reason: *reason})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "proposal %d: %s → %s, awaiting approval by someone other than %s\n", r.ID, shown(r.OperationID),
			shown(string(r.To)), shown(personName(r.ProposedByName, r.ProposedBy)))
	case "approve":
		d, err := svc.Approve(actx, sc, *tenant, id)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "approved %d: operation %s is %s\n", id, shown(d.Operation.ID), shown(string(d.Operation.State)))
		if d.Successor.ID != "" {
			fmt.Fprintf(stdout, "superseded by operation %s (intent %s)\n", shown(d.Successor.ID), shown(d.Successor.IntentRef))
		}
	case "reject":
		if err := svc.Reject(actx, sc, *tenant, id, *reason); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "rejected %d\n", id)
	case "withdraw":
		if err := svc.Withdraw(actx, sc, *tenant, id, *reason); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "withdrew %d\n", id)
	}
	return nil
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
	if q.Partial {
		fmt.Fprintf(w, "\nThe queue is longer than settle reads at once (%d per state); narrow it with --target.\n", resolve.QueueScan)
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

// escalationNotices prints the tenant's escalation notices given up after
// the bound on attempts, as `settle callback show` prints given-up
// callbacks, or with retry queues them again.
func escalationNotices(ctx context.Context, store store, tenant string, retry bool, w io.Writer) error {
	if !ledger.ValidTenant(tenant) {
		return ledger.Errorf(ledger.EInvalid, "tenant must be 1-63 characters of a-z, 0-9, '.', '_' or '-'")
	}
	if retry {
		k, err := store.RetryGivenUpEscalationNotices(ctx, tenant, time.Now())
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
