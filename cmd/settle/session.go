package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"settle/ledger"
)

const sessionUsage = `usage: settle session revoke --subject SUBJECT [flags]

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
	if cmd != "revoke" {
		fmt.Fprintf(stderr, "unknown session command %q\n%s", cmd, sessionUsage)
		return errUsage
	}
	fs := withUsage(flag.NewFlagSet("settle session "+cmd, flag.ContinueOnError), sessionUsage)
	dbURL := dbFlag(fs)
	subject := fs.String("subject", "", "stable identity whose sessions end, as the event log shows it (required)")
	if err := parse(fs, args[1:], stdout, stderr); err != nil {
		return err
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
