package main

import (
	"context"
	"flag"
	"os/user"

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
// that scripts that issue tokens keep working; escalation and quarantine
// decisions name their person explicitly (the two-person rule compares
// them).
func byFlag(fs *flag.FlagSet, defaultToOSUser bool) *string {
	def := ""
	if defaultToOSUser {
		if u, err := user.Current(); err == nil {
			def = u.Username
		}
	}
	return fs.String("by", def, "who acts, recorded as cli:NAME")
}

// asCLI returns ctx carrying the CLI actor cli:<name> in role.
func asCLI(ctx context.Context, name, role string) context.Context {
	return ledger.NewContextWithActor(ctx, ledger.Actor{Subject: "cli:" + name, Name: name, Role: role})
}
