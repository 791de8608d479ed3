package main

import (
	"context"
	"flag"
	"fmt"
	"os/user"
	"strings"
	"unicode"

	"settle/ledger"
)

// The roles the CLI acts under: an operator with shell access to the
// database is trusted with everything, but the record says which kind of
// work each action was — the console's roles for the same actions.
const (
	cliRoleAdmin = "admin" // tokens and callbacks
	cliRoleOwner = "owner" // escalations and quarantine
)

// byFlag defines --by: who acts, recorded as the stable subject "cli:NAME".
// For tokens and callbacks it defaults to the operating-system user, so
// that scripts that issue tokens keep working; quarantine decisions name
// their person explicitly. Escalation decisions, which the two-person rule
// counts, take no --by: see asPerson.
func byFlag(fs *flag.FlagSet, defaultToOSUser bool) *string {
	def := ""
	if defaultToOSUser {
		def = osUser()
	}
	return fs.String("by", def, "who acts, recorded as cli:NAME")
}

// osUser is the operating-system user who runs the command, "" when it
// cannot be told.
func osUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return ""
}

// asCLI returns ctx carrying the CLI actor cli:<name> in role.
func asCLI(ctx context.Context, name, role string) context.Context {
	return ledger.NewContextWithActor(ctx, ledger.Actor{Subject: "cli:" + name, Name: name, Role: role})
}

// asPerson returns ctx carrying the CLI actor for a decision the
// two-person rule counts: the operating-system user who runs the command
// (not a flag: it comes from the OS) acting as person, a console person
// the ledger knows (ledger.PersonStore) in the tenant. The subject
// recorded is "cli:<osuser> as <person>", the person normalised as the
// console's sign-in does; who may run the CLI at all is whoever holds the
// database credentials (docs/runbook.md).
func asPerson(ctx context.Context, ps ledger.PersonStore, tenant, person string) (context.Context, error) {
	u, err := user.Current()
	if err != nil || u.Username == "" {
		return nil, fmt.Errorf("cannot tell which operating-system user runs this command: %v", err)
	}
	if strings.ContainsFunc(u.Username, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
		return nil, ledger.Errorf(ledger.EInvalid, "the operating-system user name %s cannot be recorded", shown(u.Username))
	}
	p := ledger.NormalizeSubject(person)
	if !ledger.IsConsolePerson(p) {
		return nil, ledger.Errorf(ledger.EInvalid, "--as names a console person, oidc:<subject> or demo:<user>, as the event log shows them; got %s", shown(person))
	}
	known, err := ps.KnownPerson(ctx, tenant, p)
	if err != nil {
		return nil, err
	}
	if !known {
		return nil, ledger.Errorf(ledger.EInvalid, "--as %s is not a console person settle knows: they must have signed in to the console, or acted in tenant %s there", shown(p), shown(tenant))
	}
	return ledger.NewContextWithActor(ctx, ledger.Actor{Subject: ledger.CLISubject(u.Username, p), Name: p, Role: cliRoleOwner}), nil
}
