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

const escalationUsage = `usage: settle escalation <list|propose|approve|reject|notices> --tenant NAME [flags]

  settle escalation list --tenant T [--all]
  settle escalation notices --tenant T [--retry]
      print the notices to owning teams given up after settle serve's
      --callback-max-attempts; --retry queues them again, due now, recorded
      as an action of cli:<your OS user> in role admin
  settle escalation propose --tenant T OPERATION --to SUCCEEDED|FAILED_TERMINAL [--remote-ref ID] --reason TEXT --as PERSON
  settle escalation approve --tenant T PROPOSAL --as PERSON    (a different person than the proposer)
  settle escalation reject  --tenant T PROPOSAL --as PERSON --reason TEXT

  --as PERSON names the console person you act as, as the event log shows
  them (oidc:<subject> or demo:<user>); settle must know them: they have
  signed in to the console or acted in the tenant there. The record is
  "cli:<your OS user> as PERSON", in role owner; the two-person rule
  compares the person, so nobody approves their own proposal, made here
  or in the console.
`

// escalation works the escalation queue from the command line: one person
// proposes how an ESCALATED operation ended, another approves it.
func escalation(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	verbs := map[string]bool{"list": true, "propose": true, "approve": true, "reject": true, "notices": true}
	if len(args) > 0 && isHelp(args[0]) {
		fmt.Fprint(stdout, escalationUsage)
		return errHelp
	}
	if len(args) == 0 || !verbs[args[0]] {
		fmt.Fprint(stderr, escalationUsage)
		return errUsage
	}
	verb := args[0]
	fs := withUsage(flag.NewFlagSet("settle escalation "+verb, flag.ContinueOnError), escalationUsage)
	dbURL := dbFlag(fs)
	tenant := fs.String("tenant", "", "the tenant (required)")
	all := fs.Bool("all", false, "list decided proposals too")
	retry := fs.Bool("retry", false, "queue the given-up notices again (notices)")
	to := fs.String("to", "", "SUCCEEDED or FAILED_TERMINAL")
	ref := fs.String("remote-ref", "", "the target's object id (required for SUCCEEDED)")
	reason := fs.String("reason", "", "the evidence relied on, or why a proposal is rejected")
	as := fs.String("as", "", "the console person you act as (required to decide)")
	by := fs.String("by", "", "no longer accepted: use --as")
	pos, err := parseInterspersed(fs, args[1:], stdout, stderr)
	if err != nil {
		return err
	}
	wantPos := map[string]int{"list": 0, "propose": 1, "approve": 1, "reject": 1, "notices": 0}[verb]
	if *by != "" {
		fmt.Fprintf(stderr, "--by is no longer accepted: the operating-system user is recorded, with --as naming the console person you act as\n%s", escalationUsage)
		return errUsage
	}
	if *tenant == "" || len(pos) != wantPos || (verb != "list" && verb != "notices" && *as == "") || (*retry && verb != "notices") {
		fmt.Fprint(stderr, escalationUsage)
		return errUsage
	}
	var id int64
	if verb == "approve" || verb == "reject" {
		if id, err = strconv.ParseInt(pos[0], 10, 64); err != nil {
			fmt.Fprintf(stderr, "proposal id must be a number, got %q\n", pos[0])
			return errUsage
		}
	}
	store, _, err := openStore(ctx, *dbURL, stderr)
	if err != nil {
		return err
	}
	defer store.Close()

	if verb == "list" {
		return listEscalations(ctx, store, *tenant, *all, stdout)
	}
	if verb == "notices" {
		return escalationNotices(ctx, store, *tenant, *retry, stdout)
	}
	actx, err := asPerson(ctx, store, *tenant, *as)
	if err != nil {
		return err
	}
	switch verb {
	case "propose":
		r, err := store.Propose(actx, ledger.Resolution{Tenant: *tenant, OperationID: pos[0], To: ledger.State(*to),
			RemoteRef: *ref, Reason: *reason})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "proposal %d: %s → %s, awaiting approval by someone other than %s\n", r.ID, shown(r.OperationID), shown(string(r.To)), shown(personName(r.ProposedByName, r.ProposedBy)))
	case "approve":
		op, err := store.Approve(actx, *tenant, id)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "approved %d: operation %s is %s\n", id, shown(op.ID), shown(string(op.State)))
	case "reject":
		if err := store.Reject(actx, *tenant, id, *reason); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "rejected %d\n", id)
	}
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

// escalationNotices prints the tenant's escalation notices given up after
// the bound on attempts, as `settle callback show` prints given-up
// callbacks, or with retry queues them again.
func escalationNotices(ctx context.Context, store store, tenant string, retry bool, w io.Writer) error {
	if !ledger.ValidTenant(tenant) {
		return ledger.Errorf(ledger.EInvalid, "tenant must be 1-63 characters of a-z, 0-9, '.', '_' or '-'")
	}
	if retry {
		who := osUser()
		if who == "" {
			return fmt.Errorf("cannot tell which operating-system user runs this command, to record the retry")
		}
		k, err := store.RetryGivenUpEscalationNotices(asCLI(ctx, who, cliRoleAdmin), tenant, time.Now())
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
