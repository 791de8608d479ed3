package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"settle/ledger"
)

// sessionCmd runs `settle session …`: console sessions live in the ledger
// database, so revoking them here takes effect on every replica at the
// person's next request.
type sessionCmd struct {
	List   sessionList   `cmd:"" help:"the live console sessions: subject, name and e-mail at sign-in, when signed in, last seen and when the session ends; find the subject of a person by their name or e-mail here"`
	Revoke sessionRevoke `cmd:"" help:"end every console session of --subject at once (e.g. oidc:248289761001 or demo:support); they must sign in again, and their roles are read afresh from the provider's claims"`
}

type sessionList struct {
	dbOption `embed:""`
	Subject  string `help:"list only this identity's sessions, as the event log shows it"`
}

type sessionRevoke struct {
	dbOption `embed:""`
	Subject  string `help:"stable identity whose sessions end (required), as the event log shows it"`
}

func (c *sessionRevoke) check() error {
	if c.Subject == "" {
		return usagef("--subject is required")
	}
	if !strings.Contains(c.Subject, ":") || len(c.Subject) > 300 {
		return ledger.Errorf(ledger.EInvalid, "a subject looks like oidc:… or demo:…")
	}
	return nil
}

func (c *sessionRevoke) runLedger(ctx context.Context, e *env, s *services) error {
	n, err := s.store.RevokeSessions(ctx, c.Subject)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "revoked %d session(s) of %s\n", n, shown(c.Subject))
	return nil
}

// runLedger prints the live console sessions, one a line.
func (c *sessionList) runLedger(ctx context.Context, e *env, s *services) error {
	stdout, subject := e.stdout, c.Subject
	sl := s.store

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
