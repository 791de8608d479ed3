package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"settle/auth"
	"settle/ledger"
	"settle/ledger/postgres"
	"settle/ledger/sqlite"
)

// errUsage means the flag package has already explained the problem.
var errUsage = errors.New("usage")

// defaultSQLite is the store used when no database URL is given.
const defaultSQLite = "settle.db"

// dbFlag registers --database-url, defaulting to $DATABASE_URL.
func dbFlag(fs *flag.FlagSet) *string {
	return fs.String("database-url", os.Getenv("DATABASE_URL"),
		"postgres://… for PostgreSQL, sqlite:PATH for SQLite; empty means SQLite at ./"+defaultSQLite+" (env DATABASE_URL)")
}

func parse(fs *flag.FlagSet, args []string, stderr io.Writer) error {
	pos, err := parseInterspersed(fs, args, stderr)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "unexpected argument %q\n", pos[0])
		return errUsage
	}
	return nil
}

// parseInterspersed parses flags that may come before or after positional
// arguments (settle token revoke ID --database-url …) and returns the
// positional ones.
func parseInterspersed(fs *flag.FlagSet, args []string, stderr io.Writer) ([]string, error) {
	fs.SetOutput(stderr)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, errUsage
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// store is what both adapters implement.
type store interface {
	ledger.Store
	ledger.InboxStore
	ledger.AuditStore
	ledger.CallbackStore
	ledger.ResolutionStore
	ledger.FigureStore
	auth.TokenStore
}

// openStore opens and migrates the store that url names and describes it
// for the start-up line (never with credentials).
func openStore(ctx context.Context, url string) (store, string, error) {
	switch {
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		pool, err := postgres.Open(ctx, url)
		if err != nil {
			return nil, "", err
		}
		if err := postgres.Migrate(ctx, pool); err != nil {
			pool.Close()
			return nil, "", err
		}
		cfg := pool.Config().ConnConfig
		return postgres.New(pool, nil), fmt.Sprintf("postgres %s:%d/%s", cfg.Host, cfg.Port, cfg.Database), nil
	case url == "", strings.HasPrefix(url, "sqlite:"):
		path := strings.TrimPrefix(url, "sqlite:")
		if path == "" {
			path = defaultSQLite
		}
		s, err := sqlite.Open(ctx, path, nil)
		if err != nil {
			return nil, "", err
		}
		return s, "sqlite " + path, nil
	}
	return nil, "", fmt.Errorf("unsupported database URL: want postgres://… or sqlite:PATH")
}

func migrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("settle migrate", flag.ContinueOnError)
	dbURL := dbFlag(fs)
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	store, desc, err := openStore(ctx, *dbURL)
	if err != nil {
		return err
	}
	defer store.Close()
	fmt.Fprintf(stdout, "settle: migrations applied (%s)\n", desc)
	return nil
}
