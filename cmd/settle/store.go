package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"settle/ledger"
	"settle/ledger/postgres"
	"settle/ledger/sqlite"
)

var (
	// errUsage means the problem has been explained on stderr: exit 2.
	errUsage = errors.New("usage")
	// errHelp means help was asked for and printed on stdout: exit 0, as
	// the flag package's ErrHelp convention has it.
	errHelp = errors.New("help")
)

// defaultSQLite is the store used when no database URL is given.
const defaultSQLite = "settle.db"

// dbFlag registers --database-url, defaulting to $DATABASE_URL.
func dbFlag(fs *flag.FlagSet) *string {
	return fs.String("database-url", os.Getenv("DATABASE_URL"),
		"postgres://… for PostgreSQL, sqlite:PATH for SQLite; empty means SQLite at ./"+defaultSQLite+" (env DATABASE_URL)")
}

// isHelp reports whether arg asks for help the way the flag package
// understands it, for commands that read a verb before their flags.
func isHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--h", "--help":
		return true
	}
	return false
}

// parse parses flags that admit no positional argument.
func parse(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	pos, err := parseInterspersed(fs, args, stdout, stderr)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "%s: unexpected argument %q\n", fs.Name(), pos[0])
		return errUsage
	}
	return nil
}

// parseInterspersed parses flags that may come before or after positional
// arguments (settle token revoke ID --database-url …) and returns the
// positional ones. -h prints fs.Usage (or the flags) on stdout and returns
// errHelp; a bad flag is one line on stderr, without the usage text the
// flag package would add, and errUsage.
func parseInterspersed(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) ([]string, error) {
	var msg strings.Builder
	usage := fs.Usage
	fs.SetOutput(&msg)
	fs.Usage = func() {}
	defer func() { fs.SetOutput(stderr); fs.Usage = usage }()
	var pos []string
	for {
		err := fs.Parse(args)
		switch {
		case errors.Is(err, flag.ErrHelp):
			fs.SetOutput(stdout)
			if usage != nil {
				usage()
			} else {
				fmt.Fprintf(stdout, "usage: %s [flags]\n\nflags:\n", fs.Name())
				fs.PrintDefaults()
			}
			return nil, errHelp
		case err != nil:
			fmt.Fprintf(stderr, "%s: %s\n", fs.Name(), strings.TrimSpace(msg.String()))
			return nil, errUsage
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// withUsage makes fs print text, then its flags, when help is asked for.
func withUsage(fs *flag.FlagSet, text string) *flag.FlagSet {
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), text)
		fmt.Fprintln(fs.Output(), "\nflags:")
		fs.PrintDefaults()
	}
	return fs
}

// store is what both adapters implement.
type store interface {
	ledger.Store
	// settle serve counts what the store commits; other commands leave
	// the observer nil, and their writes tell nobody.
	ledger.Observable
	ledger.InboxStore
	ledger.AuditStore
	ledger.CallbackStore
	ledger.EscalationStore
	ledger.ResolutionStore
	ledger.FigureStore
	ledger.SessionStore
	ledger.PersonStore
	ledger.Browser
	ledger.TokenStore
	ledger.ActionStore
	ledger.TenantParamStore
	ledger.TenantParamLister
	ledger.RetentionStore
	ledger.TenantEraser
	ledger.DrillStore
	ledger.LeaderStore
	ledger.GaugeStore
}

// openStore opens the store that url names for a command that reads and
// writes the ledger: it never changes the schema, and refuses a database
// whose schema is behind this settle (see ledger.Schema). A schema ahead of
// it, migrated by a newer settle during a rolling upgrade, is used with a
// warning on stderr.
func openStore(ctx context.Context, url string, stderr io.Writer) (store, string, error) {
	return openStoreWith(ctx, url, false, func(msg string) { fmt.Fprintf(stderr, "settle: warning: %s\n", msg) })
}

// openStoreWith opens the store that url names, applying the migrations
// first when migrate is set (settle migrate, settle serve), and describes
// it for the start-up line (never with credentials). A database that
// cannot be reached or opened is one plain sentence: where, and the cause.
// warn receives the sentence about a schema ahead of this settle.
func openStoreWith(ctx context.Context, url string, migrate bool, warn func(string)) (store, string, error) {
	var (
		st     store
		desc   string
		schema func(context.Context) (ledger.Schema, error)
	)
	switch {
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		cfg, err := postgres.ParseConfig(url) // its errors never quote the URL
		if err != nil {
			return nil, "", err
		}
		cc := cfg.ConnConfig
		desc = fmt.Sprintf("postgres %s:%d/%s", cc.Host, cc.Port, cc.Database)
		pool, err := postgres.Open(ctx, url)
		if err != nil {
			return nil, "", err
		}
		if migrate {
			if err := postgres.Migrate(ctx, pool); err != nil {
				pool.Close()
				return nil, "", err
			}
		}
		st = postgres.New(pool, nil)
		schema = func(ctx context.Context) (ledger.Schema, error) { return postgres.Schema(ctx, pool) }
	case url == "", strings.HasPrefix(url, "sqlite:"):
		path := strings.TrimPrefix(url, "sqlite:")
		if path == "" {
			path = defaultSQLite
		}
		if why := sqlitePathProblem(path); why != "" {
			return nil, "", fmt.Errorf("cannot open SQLite database %s: %s", path, why)
		}
		desc = "sqlite " + path
		var (
			s   *sqlite.Store
			err error
		)
		if migrate {
			s, err = sqlite.Open(ctx, path, nil)
		} else {
			// Connecting would create an empty file where a mistyped path
			// points; only migrate and serve make a new database.
			if _, serr := os.Stat(path); errors.Is(serr, os.ErrNotExist) {
				return nil, "", fmt.Errorf("no SQLite database at %s; run settle migrate (or settle serve) to create it", path)
			}
			s, err = sqlite.Connect(ctx, path, nil)
		}
		if err != nil {
			return nil, "", err
		}
		st, schema = s, s.Schema
	default:
		return nil, "", fmt.Errorf("unsupported database URL: want postgres://… or sqlite:PATH")
	}
	sc, err := schema(ctx)
	if err == nil {
		err = sc.Check()
	}
	if err != nil {
		st.Close()
		return nil, "", err
	}
	if sc.Ahead() {
		warn(fmt.Sprintf("the database schema is at %d, ahead of this settle (%d): a newer settle migrated it; "+
			"running on it, as during a rolling upgrade, but upgrade this settle", sc.Database(), sc.Binary()))
	}
	return st, desc, nil
}

// sqlitePathProblem names what stops SQLite creating or opening path, in
// words SQLite's own "unable to open database file" does not give.
func sqlitePathProblem(path string) string {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return "it is a directory"
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "directory " + dir + " does not exist"
	case err != nil:
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return "directory " + dir + ": " + err.Error()
	case !fi.IsDir():
		return dir + " is not a directory"
	}
	return ""
}

func migrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := withUsage(flag.NewFlagSet("settle migrate", flag.ContinueOnError),
		"usage: settle migrate [--database-url URL]\n\nApplies the embedded migrations and exits.\n")
	dbURL := dbFlag(fs)
	if err := parse(fs, args, stdout, stderr); err != nil {
		return err
	}
	store, desc, err := openStoreWith(ctx, *dbURL, true, func(msg string) { fmt.Fprintf(stderr, "settle: warning: %s\n", msg) })
	if err != nil {
		return err
	}
	defer store.Close()
	fmt.Fprintf(stdout, "settle: migrations applied (%s)\n", desc)
	return nil
}
