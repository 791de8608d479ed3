// Package pgtest gives tests their own migrated PostgreSQL database. Tests
// find the server through TEST_DATABASE_URL (default: the local service on
// 127.0.0.1:5432, database test). An unreachable server fails the test: the
// suite never skips PostgreSQL silently.
//
// The migrations run once per set of migration files, into a template
// database named after their hash; each test then gets a copy of it
// (CREATE DATABASE … TEMPLATE), which costs the same however many migrations
// there are and, unlike migrating, never waits on another test's lock.
package pgtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"settle/ledger/postgres"
	"settle/migrations"
)

// DefaultURL is used when TEST_DATABASE_URL is unset.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// URL returns the server tests use.
func URL() string {
	if u := os.Getenv("TEST_DATABASE_URL"); u != "" {
		return u
	}
	return DefaultURL
}

// Schema creates a fresh, migrated database and drops it when the test
// ends. It returns a pool config for that database; make as many pools from
// it as the test needs.
func Schema(t testing.TB) *pgxpool.Config {
	t.Helper()
	cfg, err := postgres.ParseConfig(URL())
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.Database = database(t)
	return cfg
}

// DatabaseURL is Schema for tests that hand a URL to a process: the URL of a
// fresh, migrated database that is dropped when the test ends.
func DatabaseURL(t testing.TB) string {
	t.Helper()
	u, err := url.Parse(URL())
	if err != nil {
		t.Fatalf("TEST_DATABASE_URL: %v", err)
	}
	u.Path = "/" + database(t)
	return u.String()
}

// database copies the template into a new database and returns its name.
func database(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	tmpl, err := template(ctx)
	if err != nil {
		t.Fatal(err)
	}
	admin := connect(t)
	defer admin.Close(ctx)
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "settle_test_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name+" TEMPLATE "+tmpl); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		c := connect(t)
		defer c.Close(context.Background())
		// FORCE ends connections a test left open (a killed child process's).
		if _, err := c.Exec(context.Background(), "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop test database: %v", err)
		}
	})
	return name
}

func connect(t testing.TB) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), URL())
	if err != nil {
		t.Fatalf("PostgreSQL tests need a server at TEST_DATABASE_URL (%s): %v", redacted(), err)
	}
	return c
}

var (
	templateOnce sync.Once
	templateName string
	templateErr  error
)

// template returns the name of the migrated template database, creating
// it if no process has yet. Processes (go test runs one per package)
// serialise on an advisory lock, and a template is published under its
// final name only once fully migrated.
func template(ctx context.Context) (string, error) {
	templateOnce.Do(func() { templateName, templateErr = makeTemplate(ctx) })
	return templateName, templateErr
}

func makeTemplate(ctx context.Context) (string, error) {
	sum, err := migrationsHash()
	if err != nil {
		return "", err
	}
	name := "settle_template_" + sum
	admin, err := pgx.Connect(ctx, URL())
	if err != nil {
		return "", fmt.Errorf("PostgreSQL tests need a server at TEST_DATABASE_URL (%s): %w", redacted(), err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "SELECT pg_advisory_lock(hashtext('settle test template'))"); err != nil {
		return "", fmt.Errorf("template lock: %w", err)
	}
	defer admin.Exec(ctx, "SELECT pg_advisory_unlock(hashtext('settle test template'))") //nolint:errcheck
	var exists bool
	if err := admin.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return "", fmt.Errorf("template: %w", err)
	}
	if exists {
		return name, nil
	}
	building := name + "_building"
	if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+building+" WITH (FORCE)"); err != nil {
		return "", fmt.Errorf("template: %w", err)
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+building); err != nil {
		return "", fmt.Errorf("template: %w", err)
	}
	cfg, err := postgres.ParseConfig(URL())
	if err != nil {
		return "", err
	}
	cfg.ConnConfig.Database = building
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return "", fmt.Errorf("template: %w", err)
	}
	err = postgres.Migrate(ctx, pool)
	pool.Close()
	if err != nil {
		return "", fmt.Errorf("template: %w", err)
	}
	// Nobody may connect to a template: CREATE DATABASE refuses to copy a
	// database that has connections.
	for _, stmt := range []string{
		"ALTER DATABASE " + building + " RENAME TO " + name,
		"ALTER DATABASE " + name + " WITH ALLOW_CONNECTIONS false IS_TEMPLATE true",
	} {
		if _, err := admin.Exec(ctx, stmt); err != nil {
			return "", fmt.Errorf("template: %w", err)
		}
	}
	return name, nil
}

// migrationsHash names the template after the migrations it holds, so that
// a changed or added migration makes a new one.
func migrationsHash() (string, error) {
	h := sha256.New()
	err := fs.WalkDir(migrations.Postgres, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(migrations.Postgres, path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d\n", path, len(b))
		h.Write(b)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("template: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// Pool opens a pool from cfg and closes it when the test ends.
func Pool(t testing.TB, cfg *pgxpool.Config) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg.Copy())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func redacted() string {
	if os.Getenv("TEST_DATABASE_URL") == "" {
		return DefaultURL
	}
	return "set"
}
