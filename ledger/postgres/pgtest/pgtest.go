// Package pgtest gives tests their own migrated PostgreSQL schema. Tests find
// the server through TEST_DATABASE_URL (default: the local service on
// 127.0.0.1:5432, database test). An unreachable server fails the test: the
// suite never skips PostgreSQL silently.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"settle/ledger/postgres"
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

// Schema creates a fresh schema, migrates it and drops it when the test
// ends. It returns a pool config whose connections use that schema; make
// as many pools from it as the test needs.
func Schema(t testing.TB) *pgxpool.Config {
	t.Helper()
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, URL())
	if err != nil {
		t.Fatalf("PostgreSQL tests need a server at TEST_DATABASE_URL (%s): %v", redacted(), err)
	}
	defer admin.Close(ctx)
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "settle_test_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), URL())
		if err != nil {
			t.Errorf("drop schema: %v", err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema: %v", err)
		}
	})
	cfg, err := postgres.ParseConfig(URL())
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	pool := Pool(t, cfg)
	if err := postgres.Migrate(ctx, pool); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return cfg
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
