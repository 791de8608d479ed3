package sqlite_test

import (
	"context"
	"database/sql"
	"io/fs"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/pressly/goose/v3"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/sqlite"
	"settle/ledger/storetest"
	"settle/migrations"
)

// Migration 00010 starts the replay window at the first claim. Rows written
// before it keep their end and derive the window's length from it; a row
// still PREPARED gets its end at its first claim.
func TestMigrate_WindowAtFirstClaim(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := storetest.SQLiteFile(t)
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	fsys, err := fs.Sub(migrations.SQLite, "sqlite")
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, db, fsys)
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
			VALUES ('acme', ?1, 'charge', ?1, 'payments', ?2, ?3, ?4, ?5, ?6, ?7, ?7)`,
			id, payload, hash, uuid.NewString(), string(state), created.Add(time.Hour).UnixMicro(), created.UnixMicro())
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	prepared, sent := insert(ledger.Prepared), insert(ledger.InFlight)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := sqlite.Open(ctx, path, clk.Now) // migrates up again
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
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

// Migration 00012 rebuilds audit_findings to allow phantom findings; the
// findings already recorded survive with their ids.
func TestMigrate_PhantomFindings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := storetest.SQLiteFile(t)
	clk := ledgertest.NewClock()
	s, err := sqlite.Open(ctx, path, clk.Now)
	if err != nil {
		t.Fatal(err)
	}
	op, _, err := s.Create(ctx, ledger.NewOperation{Tenant: "acme", Type: "charge", IntentRef: "i-1",
		Target: "payments", Payload: []byte(`{"amount":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecordFinding(ctx, ledger.Finding{Tenant: "acme", OperationID: op.ID, Kind: ledger.FindingDuplicate,
		RemoteIDs: []string{"a", "b"}}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	fsys, err := fs.Sub(migrations.SQLite, "sqlite")
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, db, fsys)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 11); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s, err = sqlite.Open(ctx, path, clk.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.RecordFinding(ctx, ledger.Finding{Tenant: "acme", OperationID: op.ID, Kind: ledger.FindingPhantom,
		Escalated: true}); err != nil {
		t.Fatal(err)
	}
	found, err := s.Findings(ctx, "acme", time.Time{})
	if err != nil || len(found) != 2 {
		t.Fatalf("findings %+v, %v", found, err)
	}
	if found[1].Kind != ledger.FindingDuplicate || found[1].ID != 1 || len(found[1].RemoteIDs) != 2 ||
		found[0].Kind != ledger.FindingPhantom || found[0].ID != 2 {
		t.Fatalf("after the rebuild: %+v", found)
	}
}
