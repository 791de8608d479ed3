package postgres_test

import (
	"context"
	"io/fs"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/postgres"
	"settle/ledger/postgres/pgtest"
	"settle/migrations"
)

// Migration 00010 starts the replay window at the first claim. Rows written
// before it keep their end and derive the window's length from it; a row
// still PREPARED gets its end at its first claim.
func TestMigrate_WindowAtFirstClaim(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t, pgtest.Schema(t))
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	fsys, err := fs.Sub(migrations.Postgres, "postgres")
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, fsys)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 9); err != nil {
		t.Fatal(err)
	}
	clk := ledgertest.NewClock()
	created := clk.Now()
	payload, hash, err := ledger.Canonicalize([]byte(`{"amount":1}`))
	if err != nil {
		t.Fatal(err)
	}
	insert := func(state ledger.State) string {
		t.Helper()
		id := uuid.NewString()
		_, err := db.ExecContext(ctx, `INSERT INTO operation_ledger (tenant_id, operation_id, operation_type,
			intent_ref, target, payload, payload_hash, remote_key, state, retry_window_end, created_at, updated_at)
			VALUES ('acme', $1::uuid, 'charge', $1::text, 'payments', $2, $3, $4, $5, $6, $7, $7)`,
			id, payload, hash, uuid.NewString(), string(state), created.Add(time.Hour), created)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	prepared, sent := insert(ledger.Prepared), insert(ledger.InFlight)
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}

	s := postgres.New(pool, clk.Now)
	old, err := s.Get(ctx, "acme", sent)
	if err != nil {
		t.Fatal(err)
	}
	if old.RetryWindow != time.Hour || !old.RetryWindowEnd.Equal(created.Add(time.Hour)) || old.FirstClaimedAt != nil {
		t.Fatalf("claimed before the migration: window %s ending %s, first claimed %v; want 1h ending %s, none",
			old.RetryWindow, old.RetryWindowEnd, old.FirstClaimedAt, created.Add(time.Hour))
	}
	clk.Advance(10 * time.Minute)
	claimed, err := s.Claim(ctx, "acme", prepared, hash, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if claimed.RetryWindow != time.Hour || !claimed.RetryWindowEnd.Equal(clk.Now().Add(time.Hour)) {
		t.Fatalf("PREPARED before the migration, claimed after: window %s ending %s, want 1h ending %s",
			claimed.RetryWindow, claimed.RetryWindowEnd, clk.Now().Add(time.Hour))
	}
}

// Migration 00012 allows phantom findings and walks FAILED_TERMINAL
// operations too; it can be rolled back and applied again.
func TestMigrate_PhantomFindings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t, pgtest.Schema(t))
	clk := ledgertest.NewClock()
	s := postgres.New(pool, clk.Now)
	op, _, err := s.Create(ctx, ledger.NewOperation{Tenant: "acme", Type: "charge", IntentRef: "i-1",
		Target: "payments", Payload: []byte(`{"amount":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecordFinding(ctx, ledger.Finding{Tenant: "acme", OperationID: op.ID, Kind: ledger.FindingDuplicate}); err != nil {
		t.Fatal(err)
	}
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	fsys, err := fs.Sub(migrations.Postgres, "postgres")
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, fsys)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 11); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecordFinding(ctx, ledger.Finding{Tenant: "acme", OperationID: op.ID, Kind: ledger.FindingPhantom}); err == nil {
		t.Fatal("a phantom finding was stored before migration 00012")
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecordFinding(ctx, ledger.Finding{Tenant: "acme", OperationID: op.ID, Kind: ledger.FindingPhantom}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.CountFindings(ctx, "acme", "", ledger.Since(time.Time{})); err != nil || n != 2 {
		t.Fatalf("%d findings, %v", n, err)
	}
}
