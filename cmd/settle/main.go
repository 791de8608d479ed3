// Command settle runs the operation ledger: `settle serve` starts the HTTP
// server and the background loops over PostgreSQL or an embedded SQLite
// file; the other commands are the operator's tools over the same ledger.
// `settle help` lists them; `settle <command> --help` gives the flags.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// cli is every command of settle, its usage read from the struct tags by
// kong (see run); each command is a struct in the file of its name.
type cli struct {
	Serve      serveCmd      `cmd:"" help:"run settle (HTTP server and background workers)"`
	Migrate    migrateCmd    `cmd:"" help:"apply the database migrations and exit"`
	Token      tokenCmd      `cmd:"" help:"create, list and revoke API tokens"`
	Operation  operationCmd  `cmd:"" help:"show an operation and its event log"`
	Escalation escalationCmd `cmd:"" help:"list ESCALATED operations; propose, approve (two people) or reject a manual resolution"`
	Quarantine quarantineCmd `cmd:"" help:"list and resolve quarantined inbound events"`
	Figures    figuresCmd    `cmd:"" help:"a tenant's figures per target: UNKNOWN per day, time to resolution, escalations, conflicts, duplicates"`
	Audit      auditCmd      `cmd:"" help:"compare a target's SUCCEEDED and FAILED_TERMINAL operations with its own records (exit 1 on findings)"`
	Callback   callbackCmd   `cmd:"" help:"set, show and remove a tenant's callback endpoint; show and retry notifications given up"`
	Tenant     tenantCmd     `cmd:"" help:"set, unset and show a tenant's request parameters; erase a tenant's data"`
	Purge      purgeCmd      `cmd:"" help:"apply the retention policy once, or --dry-run to see what would go"`
	Session    sessionCmd    `cmd:"" help:"list the live console sessions, or revoke a person's at once"`
	Sim        simCmd        `cmd:"" help:"run the simulated payments target, or print its contract"`
	Drill      drillCmd      `cmd:"" help:"run the fault-injection drill against a target and store its results (exit 1 on a failed test)"`
	Gonogo     gonogoCmd     `cmd:"" help:"evaluate the eleven go/no-go controls per target (exit 1 on any FAIL)"`
	Bench      benchCmd      `cmd:"" help:"measure: settle bench lease times the lease, claim and sweep against growing backlogs; seed and console time the console over a large ledger"`
	Config     configCmd     `cmd:"" help:"check serve's configuration (flags, environment, --config file) and print it, secrets masked"`
	Help       helpCmd       `cmd:"" help:"show the commands, or the flags of one (settle help token create)"`
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}
