// Package storetest makes real stores for tests in any package: a fresh
// PostgreSQL database (see pgtest) or a fresh SQLite file, behind the
// ledgertest.Harness that the conformance suite also uses. Both start as
// copies of a database migrated once, not migrated per test.
package storetest

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/postgres"
	"settle/ledger/postgres/pgtest"
	"settle/ledger/sqlite"
)

// Postgres returns a harness whose stores each get a fresh database;
// siblings get their own pools over the same database.
func Postgres() ledgertest.Harness {
	var (
		mu      sync.Mutex
		configs = map[ledger.Store]*pgxpool.Config{}
	)
	// exec runs stmt on s's database over a pool of its own.
	exec := func(t testing.TB, s ledger.Store, stmt string) error {
		mu.Lock()
		cfg := configs[s]
		mu.Unlock()
		_, err := pgtest.Pool(t, cfg).Exec(context.Background(), stmt)
		return err
	}
	return ledgertest.Harness{
		New: func(t testing.TB, now func() time.Time) ledger.Store {
			cfg := pgtest.Schema(t)
			s := postgres.New(pgtest.Pool(t, cfg), now)
			mu.Lock()
			configs[s] = cfg
			mu.Unlock()
			return s
		},
		Sibling: func(t testing.TB, s ledger.Store, now func() time.Time) ledger.Store {
			mu.Lock()
			cfg := configs[s]
			mu.Unlock()
			return postgres.New(pgtest.Pool(t, cfg), now)
		},
		RefuseRemoteRef: func(t testing.TB, s ledger.Store, ref string) {
			// ref is the test's own constant; quote_literal keeps it inert.
			err := exec(t, s, fmt.Sprintf(`
CREATE FUNCTION settle_test_refuse() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
	IF NEW.remote_ref = %s THEN RAISE EXCEPTION 'refused by the test'; END IF;
	RETURN NEW;
END $f$;
CREATE TRIGGER settle_test_refuse BEFORE UPDATE ON operation_ledger
	FOR EACH ROW EXECUTE FUNCTION settle_test_refuse();`, pgQuote(ref)))
			if err != nil {
				t.Fatal(err)
			}
		},
		RefuseIntentRef: func(t testing.TB, s ledger.Store, ref string) {
			err := exec(t, s, fmt.Sprintf(`
CREATE FUNCTION settle_test_refuse_intent() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
	IF NEW.intent_ref = %s THEN RAISE EXCEPTION 'refused by the test'; END IF;
	RETURN NEW;
END $f$;
CREATE TRIGGER settle_test_refuse_intent BEFORE INSERT ON operation_ledger
	FOR EACH ROW EXECUTE FUNCTION settle_test_refuse_intent();`, pgQuote(ref)))
			if err != nil {
				t.Fatal(err)
			}
		},
		RefuseCallbacks: func(t testing.TB, s ledger.Store) {
			err := exec(t, s, `
CREATE FUNCTION settle_test_refuse_callback() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN RAISE EXCEPTION 'outbox refused by the test'; END $f$;
CREATE TRIGGER settle_test_refuse_callback BEFORE INSERT ON callback_outbox
	FOR EACH ROW EXECUTE FUNCTION settle_test_refuse_callback();`)
			if err != nil {
				t.Fatal(err)
			}
		},
		Exec: exec,
	}
}

// pgQuote is a SQL string literal of s (a test's constant).
func pgQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// SQLite returns a harness whose stores each get a fresh file; a sibling is
// a second Store (its own connections) on the same file, like a second
// process.
func SQLite() ledgertest.Harness {
	var (
		mu    sync.Mutex
		paths = map[ledger.Store]string{}
	)
	open := func(t testing.TB, path string, now func() time.Time) ledger.Store {
		s, err := sqlite.Open(context.Background(), path, now)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		mu.Lock()
		paths[s] = path
		mu.Unlock()
		return s
	}
	// exec runs stmt on s's file over a connection of its own.
	exec := func(t testing.TB, s ledger.Store, stmt string) error {
		mu.Lock()
		path := paths[s]
		mu.Unlock()
		db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		_, err = db.Exec(stmt)
		return err
	}
	return ledgertest.Harness{
		New: func(t testing.TB, now func() time.Time) ledger.Store {
			return open(t, SQLiteFile(t), now)
		},
		Sibling: func(t testing.TB, s ledger.Store, now func() time.Time) ledger.Store {
			mu.Lock()
			path := paths[s]
			mu.Unlock()
			return open(t, path, now)
		},
		RefuseRemoteRef: func(t testing.TB, s ledger.Store, ref string) {
			if err := exec(t, s, `CREATE TRIGGER settle_test_refuse BEFORE UPDATE ON operation_ledger
				WHEN NEW.remote_ref = `+pgQuote(ref)+` BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`); err != nil {
				t.Fatal(err)
			}
		},
		RefuseIntentRef: func(t testing.TB, s ledger.Store, ref string) {
			if err := exec(t, s, `CREATE TRIGGER settle_test_refuse_intent BEFORE INSERT ON operation_ledger
				WHEN NEW.intent_ref = `+pgQuote(ref)+` BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`); err != nil {
				t.Fatal(err)
			}
		},
		RefuseCallbacks: func(t testing.TB, s ledger.Store) {
			if err := exec(t, s, `CREATE TRIGGER settle_test_refuse_callback BEFORE INSERT ON callback_outbox
				BEGIN SELECT RAISE(ABORT, 'outbox refused by the test'); END`); err != nil {
				t.Fatal(err)
			}
		},
		Exec: exec,
	}
}

var (
	sqliteOnce     sync.Once
	sqliteTemplate []byte
	sqliteErr      error
)

// SQLiteFile returns the path of a fresh, migrated SQLite file in the
// test's temporary directory: a copy of one migrated file made once per
// test binary.
func SQLiteFile(t testing.TB) string {
	t.Helper()
	sqliteOnce.Do(func() { sqliteTemplate, sqliteErr = migratedSQLite() })
	if sqliteErr != nil {
		t.Fatal(sqliteErr)
	}
	path := filepath.Join(t.TempDir(), "settle.db")
	if err := os.WriteFile(path, sqliteTemplate, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// migratedSQLite migrates a new file and returns its bytes. Closing the
// store checkpoints the write-ahead log into the file, so the bytes are
// the whole database.
func migratedSQLite() ([]byte, error) {
	dir, err := os.MkdirTemp("", "settle-sqlite-template")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "settle.db")
	s, err := sqlite.Open(context.Background(), path, nil)
	if err != nil {
		return nil, err
	}
	if err := s.Close(); err != nil {
		return nil, err
	}
	if _, err := os.Stat(path + "-wal"); err == nil {
		return nil, fmt.Errorf("storetest: %s-wal outlived the store: the copy would miss it", path)
	}
	return os.ReadFile(path)
}

// Each runs fn once per store kind, as subtests "SQLite" and "Postgres".
func Each(t *testing.T, fn func(t *testing.T, h ledgertest.Harness)) {
	t.Run("SQLite", func(t *testing.T) { fn(t, SQLite()) })
	t.Run("Postgres", func(t *testing.T) { fn(t, Postgres()) })
}
