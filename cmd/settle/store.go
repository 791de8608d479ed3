package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"settle/ledger"
	"settle/ledger/postgres"
	"settle/ledger/sqlite"
	"settle/web"
)

// defaultSQLite is the store used when no database URL is given.
const defaultSQLite = "settle.db"

// store is the opened database. Every store method is the Ledger's: each
// dialect's Store is a *ledger.Ledger over its driver, so the commands and
// the server hold that one type, not an interface of interfaces; what
// only an open database has besides (its schema facts for the drill, a
// ping, closing it) comes from the dialect's Store.
type store = *openDB

type openDB struct {
	*ledger.Ledger
	db interface {
		SchemaFacts(context.Context) (ledger.SchemaFacts, error)
		Ping(context.Context) error
		Close() error
	}
}

// SchemaFacts implements ledger.DrillStore.
func (o *openDB) SchemaFacts(ctx context.Context) (ledger.SchemaFacts, error) {
	return o.db.SchemaFacts(ctx)
}

// Ping reports whether the database answers.
func (o *openDB) Ping(ctx context.Context) error { return o.db.Ping(ctx) }

// Close closes the database.
func (o *openDB) Close() error { return o.db.Close() }

// What the server needs (the API, webhooks, the console), checked at
// compile time, so nothing downstream asks at run time.
var _ web.Store = (*openDB)(nil)

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
		pg := postgres.New(pool, nil)
		st = &openDB{Ledger: pg.Ledger, db: pg}
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
		st, schema = &openDB{Ledger: s.Ledger, db: s}, s.Schema
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

// migrateCmd is `settle migrate`.
type migrateCmd struct {
	dbOption `embed:""`
}

// Help is the command's description in settle migrate --help.
func (migrateCmd) Help() string { return "Applies the embedded migrations and exits." }

func (m *migrateCmd) run(ctx context.Context, e *env) error {
	store, desc, err := openStoreWith(ctx, m.DatabaseURL, true, func(msg string) { fmt.Fprintf(e.stderr, "settle: warning: %s\n", msg) })
	if err != nil {
		return err
	}
	defer store.Close()
	fmt.Fprintf(e.stdout, "settle: migrations applied (%s)\n", desc)
	return nil
}
