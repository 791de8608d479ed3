package postgres_test

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"settle/ledger"
	"settle/ledger/postgres/pgtest"
)

// ledger.Unavailable on pgx's own errors: what a failover produces (no
// server on the port, a connection terminated by the server, a write on a
// read-only session) is unavailable; a statement the server refused is not.
func TestUnavailable_PgxErrors(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	_, err = pgx.Connect(ctx, "postgres://postgres@"+closed+"/x?sslmode=disable&connect_timeout=5")
	if err == nil || !ledger.Unavailable(err) {
		t.Errorf("connect to a closed port: %v; want unavailable", err)
	}

	conn, err := pgx.Connect(ctx, pgtest.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "SELEC 1"); err == nil || ledger.Unavailable(err) {
		t.Errorf("a syntax error: %v; want not unavailable", err)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SET TRANSACTION READ ONLY"); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "CREATE TEMP TABLE t (x int)"); err == nil || !ledger.Unavailable(err) {
		t.Errorf("a write in a read-only transaction (as on a standby): %v; want unavailable", err)
	}
	_ = tx.Rollback(ctx)

	victim, err := pgx.Connect(ctx, pgtest.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer victim.Close(ctx)
	if _, err := conn.Exec(ctx, "SELECT pg_terminate_backend($1)", victim.PgConn().PID()); err != nil {
		t.Fatal(err)
	}
	if _, err := victim.Exec(ctx, "SELECT 1"); err == nil || !ledger.Unavailable(err) {
		t.Errorf("a query on a terminated connection: %v; want unavailable", err)
	}
	if ledger.Unavailable(ledger.Errorf(ledger.ENotFound, "no such operation")) {
		t.Error("a ledger error is unavailable")
	}
	// A request out of time says nothing of the database, though
	// context.DeadlineExceeded is a net.Error: a query cut by its deadline.
	short, stop := context.WithTimeout(ctx, 10*time.Millisecond)
	defer stop()
	if _, err := conn.Exec(short, "SELECT pg_sleep(1)"); err == nil || ledger.Unavailable(err) {
		t.Errorf("a query past its deadline: %v; want not unavailable", err)
	}
	if ledger.Unavailable(fmt.Errorf("create: %w", context.DeadlineExceeded)) || ledger.Unavailable(context.Canceled) {
		t.Error("a context's end is unavailable")
	}
}
