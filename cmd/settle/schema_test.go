package main

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	"github.com/pressly/goose/v3"
	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"settle/migrations"
)

// schemaDB is a migrated database of each store and a way to reach it
// with goose, as an older or newer settle would have left it.
type schemaDB struct {
	url      string
	open     func(t *testing.T) *sql.DB
	dialect  goose.Dialect
	fsys     fs.FS
	versions []int64
}

func schemaDBs(t *testing.T) map[string]schemaDB {
	dir := t.TempDir()
	lite := migratedSQLite(t, dir)
	pg := schemaURL(t)
	sub := func(f fs.FS, dir string) fs.FS {
		s, err := fs.Sub(f, dir)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	return map[string]schemaDB{
		"SQLite": {url: lite, dialect: goose.DialectSQLite3, fsys: sub(migrations.SQLite, "sqlite"),
			versions: migrations.SQLiteVersions(),
			open: func(t *testing.T) *sql.DB {
				db, err := sql.Open("sqlite", filepath.Join(dir, "settle.db"))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { db.Close() })
				return db
			}},
		"Postgres": {url: pg, dialect: goose.DialectPostgres, fsys: sub(migrations.Postgres, "postgres"),
			versions: migrations.PostgresVersions(),
			open: func(t *testing.T) *sql.DB {
				db, err := sql.Open("pgx", pg)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { db.Close() })
				return db
			}},
	}
}

// down undoes the newest migration, as if an older settle had migrated
// the database.
func (s schemaDB) down(t *testing.T) {
	t.Helper()
	p, err := goose.NewProvider(s.dialect, s.open(t), s.fsys)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Down(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// dbVersion is the highest version goose records.
func (s schemaDB) dbVersion(t *testing.T) int64 {
	t.Helper()
	var v int64
	if err := s.open(t).QueryRow(`SELECT max(version_id) FROM goose_db_version WHERE is_applied`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// readWriteCommands touch the ledger without changing its schema.
var readWriteCommands = [][]string{
	{"token", "list", "--tenant", "acme"},
	{"operation", "show", "--tenant", "acme", "order-1"},
	{"escalation", "list", "--tenant", "acme"},
	{"quarantine", "list"},
	{"figures", "--tenant", "acme"},
	{"callback", "show", "--tenant", "acme"},
	{"tenant", "show", "--tenant", "acme"},
	{"session", "revoke", "--subject", "demo:support"},
}

// A database an older settle migrated: every command but migrate refuses
// it with both version numbers and leaves it as it is, and so does serve
// with --migrate=false; settle migrate brings it up to date, and then the
// commands work.
func TestSchemaGate_Behind(t *testing.T) {
	t.Parallel()
	for name, db := range schemaDBs(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			db.down(t)
			have, want := db.versions[len(db.versions)-2], db.versions[len(db.versions)-1]
			refusal := fmt.Sprintf("the database schema is at %d, this settle needs %d; run settle migrate", have, want)
			for _, args := range readWriteCommands {
				code, _, errOut := settleCmd(t, append(args, "--database-url", db.url)...)
				if code != 1 || !strings.Contains(errOut, refusal) {
					t.Errorf("settle %s on an older schema: exit %d, stderr %q; want 1 and %q", strings.Join(args, " "), code, errOut, refusal)
				}
			}
			cmd := exec.Command(binary, "serve", "--migrate=false", "--addr", "127.0.0.1:0", "--database-url", db.url)
			cmd.Dir = t.TempDir()
			out, err := runWithin(t, cmd, 30*time.Second)
			if err == nil || !strings.Contains(out, refusal) {
				t.Errorf("settle serve --migrate=false: %v, output %q; want a refusal %q", err, out, refusal)
			}
			if got := db.dbVersion(t); got != have {
				t.Fatalf("the refused commands moved the schema to %d", got)
			}

			if code, out, errOut := settleCmd(t, "migrate", "--database-url", db.url); code != 0 {
				t.Fatalf("settle migrate: %d %s %s", code, out, errOut)
			}
			if got := db.dbVersion(t); got != want {
				t.Fatalf("after settle migrate the schema is at %d, want %d", got, want)
			}
			for _, args := range readWriteCommands {
				code, _, errOut := settleCmd(t, append(args, "--database-url", db.url)...)
				if strings.Contains(errOut, "schema") || code == 2 {
					t.Errorf("settle %s after migrate: exit %d, stderr %q", strings.Join(args, " "), code, errOut)
				}
			}
		})
	}
}

// A database a newer settle migrated (a version this settle does not know)
// is used with a warning naming both versions, for rolling upgrades: the
// commands, settle migrate and settle serve, with or without migrating.
func TestSchemaGate_Ahead(t *testing.T) {
	t.Parallel()
	for name, db := range schemaDBs(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			const newer = 99999
			if _, err := db.open(t).Exec(`INSERT INTO goose_db_version (version_id, is_applied) VALUES (99999, true)`); err != nil {
				t.Fatal(err)
			}
			warning := fmt.Sprintf("the database schema is at %d, ahead of this settle (%d)", newer, db.versions[len(db.versions)-1])
			for _, args := range [][]string{{"token", "list", "--tenant", "acme"}, {"migrate"}} {
				code, _, errOut := settleCmd(t, append(args, "--database-url", db.url)...)
				if code != 0 || !strings.Contains(errOut, "settle: warning: "+warning) {
					t.Errorf("settle %s on a newer schema: exit %d, stderr %q; want 0 and the warning", strings.Join(args, " "), code, errOut)
				}
			}
			for _, migrate := range []string{"--migrate=true", "--migrate=false"} {
				s := startServer(t, t.TempDir(), nil, "--database-url", db.url, migrate)
				healthy(t, s.URL)
				if err := s.Stop(); err != nil {
					t.Fatal(err)
				}
				if log := s.Log.String(); !strings.Contains(log, "level=WARN") || !strings.Contains(log, warning) {
					t.Errorf("settle serve %s on a newer schema logged no warning:\n%s", migrate, log)
				}
			}
			if got := db.dbVersion(t); got != newer {
				t.Fatalf("schema at %d after the commands, want %d", got, newer)
			}
		})
	}
}

// A SQLite path with no file: the commands refuse to create one.
func TestSchemaGate_NoSQLiteFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "settle.db")
	code, _, errOut := settleCmd(t, "token", "list", "--tenant", "acme", "--database-url", "sqlite:"+path)
	if code != 1 || !strings.Contains(errOut, "no SQLite database at "+path+"; run settle migrate") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("the command created the file")
	}
}

// runWithin runs cmd and returns its combined output, killing it after d.
func runWithin(t *testing.T, cmd *exec.Cmd, d time.Duration) (string, error) {
	t.Helper()
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.String(), err
	case <-time.After(d):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("still running after %s: %s", d, out.String())
		return "", nil
	}
}
