package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"settle/ledger"
)

const tokenUsage = `usage: settle token <create|list|revoke> [flags]

  settle token create --tenant NAME [--by NAME]       print a new API token for the tenant (shown once)
  settle token list --tenant NAME                     list the tenant's tokens (ids, never secrets)
  settle token revoke ID --tenant NAME [--by NAME]    revoke one of the tenant's tokens

  Creating and revoking are recorded as actions of cli:NAME in role admin;
  --by defaults to the operating-system user.
`

func token(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	switch {
	case len(args) == 0:
		fmt.Fprint(stderr, tokenUsage)
		return errUsage
	case isHelp(args[0]):
		fmt.Fprint(stdout, tokenUsage)
		return errHelp
	case args[0] != "create" && args[0] != "list" && args[0] != "revoke":
		fmt.Fprintf(stderr, "settle token: unknown command %q (want create, list or revoke)\n", args[0])
		return errUsage
	}
	fs := withUsage(flag.NewFlagSet("settle token "+args[0], flag.ContinueOnError), tokenUsage)
	dbURL := dbFlag(fs)
	tenant := fs.String("tenant", "", "tenant the token acts for (required)")
	var by *string
	if args[0] != "list" {
		by = byFlag(fs, true)
	}
	pos, err := parseInterspersed(fs, args[1:], stdout, stderr)
	if err != nil {
		return err
	}
	switch {
	case args[0] == "revoke" && len(pos) == 0:
		fmt.Fprintln(stderr, "settle token revoke: the token ID is required (see settle token list)")
		return errUsage
	case args[0] == "revoke" && len(pos) > 1, args[0] != "revoke" && len(pos) > 0:
		fmt.Fprintf(stderr, "settle token %s: unexpected argument %q\n", args[0], pos[len(pos)-1])
		return errUsage
	case *tenant == "":
		fmt.Fprintf(stderr, "settle token %s: --tenant is required (the tenant the token acts for)\n", args[0])
		return errUsage
	case by != nil && *by == "":
		fmt.Fprintf(stderr, "settle token %s: --by is required (who acts)\n", args[0])
		return errUsage
	}
	store, _, err := openStore(ctx, *dbURL, stderr)
	if err != nil {
		return err
	}
	defer store.Close()

	switch args[0] {
	case "create":
		secret, t, err := ledger.NewToken(*tenant, time.Now())
		if err != nil {
			return err
		}
		if err := store.CreateToken(asCLI(ctx, *by, cliRoleAdmin), t); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "created %s for tenant %s; the token is shown only once\n", shown(t.ID), shown(t.Tenant))
		fmt.Fprintln(stdout, secret)
	case "list":
		tokens, err := store.ListTokens(ctx, *tenant)
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "ID\tTENANT\tCREATED\tREVOKED")
		for _, t := range tokens {
			revoked := "-"
			if t.RevokedAt != nil {
				revoked = t.RevokedAt.Format(time.RFC3339)
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", shown(t.ID), shown(t.Tenant), t.CreatedAt.Format(time.RFC3339), revoked)
		}
		return w.Flush()
	case "revoke":
		if err := store.RevokeToken(asCLI(ctx, *by, cliRoleAdmin), *tenant, pos[0], time.Now()); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "revoked %s\n", shown(pos[0]))
	}
	return nil
}
