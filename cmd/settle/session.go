package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"settle/ledger"
)

const sessionUsage = `usage: settle session list [--subject SUBJECT] [flags]
       settle session revoke --subject SUBJECT [flags]

  settle session list                 the live console sessions: subject, name and e-mail at sign-in,
                                      when signed in, last seen and when the session ends; find the
                                      subject of a person by their name or e-mail here
  settle session revoke --subject S   end every console session of S at once (e.g. oidc:248289761001
                                      or demo:support); they must sign in again, and their roles
                                      are read afresh from the provider's claims
`

// session runs `settle session …`: console sessions live in the ledger
// database, so revoking them here takes effect on every replica at the
// person's next request.
func session(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, sessionUsage)
		return errUsage
	}
	cmd := args[0]
	if isHelp(cmd) {
		fmt.Fprint(stdout, sessionUsage)
		return errHelp
	}
	if cmd != "revoke" && cmd != "list" {
		fmt.Fprintf(stderr, "unknown session command %q\n%s", cmd, sessionUsage)
		return errUsage
	}
	fs := withUsage(flag.NewFlagSet("settle session "+cmd, flag.ContinueOnError), sessionUsage)
	dbURL := dbFlag(fs)
	subject := fs.String("subject", "", "stable identity whose sessions end (revoke: required) or are listed, as the event log shows it")
	if err := parse(fs, args[1:], stdout, stderr); err != nil {
		return err
	}
	if cmd == "list" {
		return listSessions(ctx, *dbURL, *subject, stdout, stderr)
	}
	if *subject == "" {
		fmt.Fprint(stderr, sessionUsage)
		return errUsage
	}
	if !strings.Contains(*subject, ":") || len(*subject) > 300 {
		return ledger.Errorf(ledger.EInvalid, "a subject looks like oidc:… or demo:…")
	}

	st, _, err := openStore(ctx, *dbURL, stderr)
	if err != nil {
		return err
	}
	defer st.Close()
	ss, ok := any(st).(ledger.SessionStore)
	if !ok {
		return fmt.Errorf("this store does not keep console sessions")
	}
	n, err := ss.RevokeSessions(ctx, *subject)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "revoked %d session(s) of %s\n", n, shown(*subject))
	return nil
}

// listSessions prints the live console sessions, one a line.
func listSessions(ctx context.Context, dbURL, subject string, stdout, stderr io.Writer) error {
	st, _, err := openStore(ctx, dbURL, stderr)
	if err != nil {
		return err
	}
	defer st.Close()
	sl, ok := any(st).(ledger.SessionLister)
	if !ok {
		return fmt.Errorf("this store does not keep console sessions")
	}
	list, err := sl.ListSessions(ctx, subject)
	if err != nil {
		return err
	}
	if len(list) == 0 {
		fmt.Fprintln(stdout, "no live console sessions")
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SUBJECT\tNAME\tE-MAIL\tSIGNED IN\tLAST SEEN\tENDS")
	const at = "2006-01-02 15:04Z"
	for _, s := range list {
		ends := s.IdleExpiresAt
		if s.ExpiresAt.Before(ends) {
			ends = s.ExpiresAt
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", shown(s.Subject), dash(s.Name), dash(s.Email),
			s.CreatedAt.UTC().Format(at), s.LastSeenAt.UTC().Format(at), ends.UTC().Format(at))
	}
	if len(list) == ledger.MaxListedSessions {
		fmt.Fprintf(tw, "(the first %d only: narrow with --subject)\n", ledger.MaxListedSessions)
	}
	return tw.Flush()
}
