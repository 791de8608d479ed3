// Command settle runs the operation ledger: `settle serve` starts the HTTP
// server (and, as they land, the executor, sweeper and reconciler) over
// PostgreSQL or an embedded SQLite file; `settle migrate` applies the
// embedded schema migrations.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"settle/ledger"
)

const usage = `usage: settle <command> [flags]

commands:
  serve       run settle (HTTP server and background workers)
  migrate     apply the database migrations and exit
  token       create, list and revoke API tokens
  operation   show an operation and its event log (settle operation show --tenant T REF)
  escalation  list ESCALATED operations; propose, approve (two people) or reject a manual resolution
  quarantine  list and resolve quarantined inbound events
  figures     a tenant's figures per target: UNKNOWN per day, time to resolution, escalations, conflicts, duplicates
  audit       compare a target's SUCCEEDED and FAILED_TERMINAL operations with its own records (exit 1 on findings)
  callback    set, show and remove a tenant's callback endpoint; show and retry notifications given up
  tenant      set, unset and show a tenant's request parameters (settle tenant set --tenant T --param account=acct_123); erase a tenant's data
  purge       apply the retention policy once, or --dry-run to see what would go
  session     list the live console sessions, or revoke a person's at once (settle session list|revoke)
  sim         run the simulated payments target, or print its contract
  drill       run the fault-injection drill against a target and store its results (exit 1 on a failed test)
  gonogo      evaluate the eleven go/no-go controls per target (exit 1 on any FAIL)
  config      check serve's configuration (flags, environment, --config file) and print it, secrets masked

Run 'settle <command> -h' for the flags of a command.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run executes one subcommand and returns the process exit code. Errors are
// printed as one line on stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "serve":
		err = serve(ctx, args[1:], stdout, stderr)
	case "migrate":
		err = migrate(ctx, args[1:], stdout, stderr)
	case "token":
		err = token(ctx, args[1:], stdout, stderr)
	case "operation":
		err = operation(ctx, args[1:], stdout, stderr)
	case "quarantine":
		err = quarantine(ctx, args[1:], stdout, stderr)
	case "audit":
		err = audit(ctx, args[1:], stdout, stderr)
	case "escalation":
		err = escalation(ctx, args[1:], stdout, stderr)
	case "figures":
		err = figures(ctx, args[1:], stdout, stderr)
	case "callback":
		err = callback(ctx, args[1:], stdout, stderr)
	case "tenant":
		err = tenant(ctx, args[1:], stdout, stderr)
	case "session":
		err = session(ctx, args[1:], stdout, stderr)
	case "purge":
		err = purge(ctx, args[1:], stdout, stderr)
	case "sim":
		err = runSim(ctx, args[1:], stdout, stderr)
	case "drill":
		err = runDrill(ctx, args[1:], stdout, stderr)
	case "gonogo":
		err = runGonogo(ctx, args[1:], stdout, stderr)
	case "config":
		err = configCmd(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "settle: unknown command %q\n%s", args[0], usage)
		return 2
	}
	switch err {
	case errHelp:
		return 0
	case errUsage:
		return 2
	}
	if err != nil {
		msg := err.Error()
		if c := ledger.ErrorCode(err); c != ledger.EInternal {
			msg = ledger.ErrorMessage(err) // a domain error: its message says it all
		}
		fmt.Fprintf(stderr, "settle %s: %s\n", shown(args[0]), shown(msg))
		return 1
	}
	return 0
}
