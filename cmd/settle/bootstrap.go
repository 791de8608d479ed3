package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/user"
	"strings"

	"github.com/alecthomas/kong"

	"settle/gonogo"
	"settle/ledger"
	"settle/reconciler"
	"settle/target/sim"
	"settle/web"
)

// The one bootstrap every command goes through (run): kong parses the
// options into the command's struct (usage errors, exit 2); the command's
// check validates them (usage errors, exit 2, still before any store is
// opened); the store the options name is opened once and the services
// built on it; then the command runs (failures, exit 1).

// usageError is a problem with how a command was called: it exits 2, and
// nothing has been opened or changed.
type usageError struct {
	msg   string
	path  string                // settle COMMAND SUBCOMMAND, set by execute
	usage func(io.Writer) error // prints the command's usage after msg, if set
}

func (e *usageError) Error() string { return e.msg }

// usagef is a usageError; the runner prefixes it with the command's path.
func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// env is what a command is given besides its options.
type env struct {
	stdout, stderr io.Writer
	// given holds the flags set on the command line (not by the
	// environment, a file or a default).
	given map[string]bool
	kctx  *kong.Context
	file  *fileResolver // the --config file's settings, for settle serve and config check
}

// A command runs without the ledger (settle sim, settle config check) or
// opens it in its own way (settle serve, settle migrate).
type command interface {
	run(ctx context.Context, e *env) error
}

// A checked command validates its options before anything is opened; an
// error is a usage error unless it is a ledger error (exit 1).
type checked interface {
	check() error
}

// A ledgerCommand works on the ledger its --database-url names: the
// bootstrap opens it, builds the services and closes it after the run.
type ledgerCommand interface {
	dbURL() string
	runLedger(ctx context.Context, e *env, s *services) error
}

// services are what commands call: built once per run by the bootstrap.
type services struct {
	store store
}

// dbOption is --database-url, for every command over the ledger.
type dbOption struct {
	DatabaseURL string `name:"database-url" env:"DATABASE_URL" help:"postgres://… for PostgreSQL, sqlite:PATH for SQLite; empty means SQLite at ./${sqlite}"`
}

func (d dbOption) dbURL() string { return d.DatabaseURL }

// byOption is --by: who acts, recorded as the stable subject "cli:NAME";
// it defaults to the operating-system user, so that scripts that issue
// tokens keep working.
type byOption struct {
	By string `help:"who acts, recorded as cli:NAME" default:"${osuser}"`
}

func (b byOption) checkBy() error {
	if b.By == "" {
		return usagef("--by is required (who acts)")
	}
	return nil
}

// vars are the values the struct tags interpolate: defaults kept by the
// packages that own them.
func vars() kong.Vars {
	osuser := ""
	if u, err := user.Current(); err == nil {
		osuser = u.Username
	}
	d := web.DefaultServerLimits
	return kong.Vars{
		"osuser":                 osuser,
		"sqlite":                 defaultSQLite,
		"body_limit":             fmt.Sprint(web.DefaultBodyLimit),
		"callback_max_attempts":  fmt.Sprint(reconciler.DefaultCallbackMaxAttempts),
		"read_header_timeout":    d.ReadHeaderTimeout.String(),
		"read_timeout":           d.ReadTimeout.String(),
		"body_timeout":           d.BodyTimeout.String(),
		"write_timeout":          d.WriteTimeout.String(),
		"idle_timeout":           d.IdleTimeout.String(),
		"max_header_bytes":       fmt.Sprint(d.MaxHeaderBytes),
		"max_conns":              fmt.Sprint(d.MaxConns),
		"fd_reserve":             fmt.Sprint(fdReserve),
		"rate_limit":             fmt.Sprint(web.DefaultRateLimit),
		"rate_burst":             fmt.Sprint(web.DefaultRateBurst),
		"max_creates":            fmt.Sprint(web.DefaultMaxCreates),
		"create_wait":            web.DefaultCreateWait.String(),
		"sim_api_key_env":        sim.APIKeyEnv,
		"sim_webhook_secret_env": sim.WebhookSecretEnv,
		"max_drill_age":          retentionPeriod(gonogo.DefaultMaxDrillAge).String(),
	}
}

// exited is how kong's exit (after printing help) unwinds to run.
type exited struct{ code int }

func (e exited) Error() string { return fmt.Sprintf("exit %d", e.code) }

// newParser builds the parser of every command.
func newParser(c *cli, file *fileResolver, stdout, stderr io.Writer) (*kong.Kong, error) {
	return kong.New(c, kong.Name("settle"),
		kong.Description("settle makes consequential outbound API calls safe when their outcome is ambiguous."),
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { panic(exited{code}) }),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true, NoExpandSubcommands: true}),
		vars(), kong.Resolvers(file))
}

// run executes one command and returns the process exit code: 0, 1 for a
// failure, 2 for a usage error. Errors are one line on stderr, "settle
// COMMAND: problem".
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := execute(ctx, args, stdout, stderr)
	var (
		ue   *usageError
		done exited
	)
	switch {
	case err == nil:
		return 0
	case errors.As(err, &done):
		return done.code
	case errors.As(err, &ue):
		for _, line := range strings.Split(ue.msg, "\n") {
			fmt.Fprintf(stderr, "%s: %s\n", ue.path, line)
		}
		if ue.usage != nil {
			_ = ue.usage(stderr)
		}
		return 2
	}
	msg := err.Error()
	if c := ledger.ErrorCode(err); c != ledger.EInternal {
		msg = ledger.ErrorMessage(err) // a domain error: its message says it all
	}
	name := "settle"
	var f *failure
	if errors.As(err, &f) {
		name = f.name
	}
	fmt.Fprintf(stderr, "%s: %s\n", shown(name), shown(msg))
	return 1
}

// failure is a command's error, with the command's name for its message.
type failure struct {
	name string // settle COMMAND
	err  error
}

func (f *failure) Error() string { return f.err.Error() }
func (f *failure) Unwrap() error { return f.err }

// execute parses args and runs the command they name: nil, a *usageError,
// exited (help was printed) or a *failure.
func execute(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	var (
		c    cli
		file fileResolver
	)
	parser, err := newParser(&c, &file, stdout, stderr)
	if err != nil {
		panic(err) // the struct tags are wrong: a programming error
	}
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(exited)
			if !ok {
				panic(r)
			}
			err = e
		}
	}()
	kctx, err := parser.Parse(args)
	if err != nil {
		return parseFailed(err)
	}
	sel := kctx.Selected()
	if h, ok := sel.Target.Addr().Interface().(*helpCmd); ok {
		return execute(ctx, append(h.Command, "--help"), stdout, stderr)
	}
	e := &env{stdout: stdout, stderr: stderr, given: map[string]bool{}, kctx: kctx, file: &file}
	for _, p := range kctx.Path {
		if p.Flag != nil && !p.Resolved {
			e.given[p.Flag.Name] = true
		}
	}
	err = bootstrap(ctx, sel.Target.Addr().Interface(), e)
	var ue *usageError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ue):
		if ue.path == "" {
			ue.path = sel.FullPath()
		}
		return ue
	}
	return &failure{name: "settle " + strings.Fields(sel.FullPath())[1], err: err}
}

// bootstrap checks the command's options, opens the ledger it works on and
// runs it.
func bootstrap(ctx context.Context, cmd any, e *env) error {
	if c, ok := cmd.(checked); ok {
		if err := c.check(); err != nil {
			return err
		}
	}
	switch c := cmd.(type) {
	case ledgerCommand:
		st, _, err := openStore(ctx, c.dbURL(), e.stderr)
		if err != nil {
			return err
		}
		defer st.Close()
		// This process serves no /metrics: what it commits is stored for a
		// running settle serve to count (reconciler.Drainer).
		st.SetObserver(ledger.Recorder{Store: st,
			Log: slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
		return c.runLedger(ctx, e, &services{store: st})
	case command:
		return c.run(ctx, e)
	}
	return fmt.Errorf("command %T has no run", cmd)
}

// parseFailed is a command line kong could not read: a usage error naming
// the command, followed by the list of commands when none was chosen.
func parseFailed(err error) error {
	var pe *kong.ParseError
	if !errors.As(err, &pe) || pe.Context == nil {
		return &usageError{msg: err.Error(), path: "settle"}
	}
	ue := &usageError{msg: err.Error(), path: "settle"}
	sel := pe.Context.Selected()
	if sel != nil {
		ue.path = sel.FullPath()
	}
	if sel == nil || (len(sel.Children) > 0 && strings.HasPrefix(pe.Error(), "expected one of")) {
		ctx := pe.Context
		ue.usage = func(w io.Writer) error { ctx.Stdout = w; return ctx.PrintUsage(false) }
	}
	return ue
}

// blameUsage makes a usage error about a setting from the --config file
// name the file's line (fileResolver.blame).
func (r *fileResolver) blameUsage(err error) error {
	var ue *usageError
	if errors.As(err, &ue) {
		if fe := r.blame(ue.msg); fe != nil {
			ue.msg = fe.Error()
		}
	}
	return err
}

// helpCmd is `settle help [COMMAND…]`.
type helpCmd struct {
	Command []string `arg:"" optional:"" help:"the command to describe"`
}

// openStore opens the store that url names for a command that reads and
// writes the ledger: it never changes the schema, and refuses a database
// whose schema is behind this settle (see ledger.Schema). A schema ahead of
// it, migrated by a newer settle during a rolling upgrade, is used with a
// warning on stderr.
func openStore(ctx context.Context, url string, stderr io.Writer) (store, string, error) {
	return openStoreWith(ctx, url, false, func(msg string) { fmt.Fprintf(stderr, "settle: warning: %s\n", msg) })
}
