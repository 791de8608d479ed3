package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/sqlite"
)

// The notification is written in the transaction that records the
// transition: when it cannot be written, the transition is not applied
// either, so a final state never exists without its notification.
func TestStore_CallbackSameTransaction(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "settle.db")
	clk := ledgertest.NewClock()
	s, err := sqlite.Open(ctx, path, clk.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	secret := []byte("scs_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG")
	if err := s.SetCallback(ctx, "acme", "https://hooks.example.com/settle", secret, clk.Now()); err != nil {
		t.Fatal(err)
	}
	op, _, err := s.Create(ctx, ledger.NewOperation{Tenant: "acme", Type: "charge", IntentRef: "order-1",
		Target: "payments", Payload: []byte(`{"amount":100}`)})
	if err != nil {
		t.Fatal(err)
	}
	op, err = s.Claim(ctx, op.Tenant, op.ID, op.PayloadHash, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.ExecContext(ctx, `CREATE TRIGGER refuse BEFORE INSERT ON callback_outbox
		BEGIN SELECT RAISE(ABORT, 'outbox refused'); END`); err != nil {
		t.Fatal(err)
	}
	_, err = s.Record(ctx, ledger.Outcome{Tenant: op.Tenant, OperationID: op.ID, Fence: op.Fence,
		From: ledger.InFlight, To: ledger.Succeeded, RemoteRef: "ch_1", Actor: ledger.ActorExecutor})
	if err == nil {
		t.Fatal("record succeeded although its notification could not be written")
	}
	got, err := s.Get(ctx, op.Tenant, op.ID)
	if err != nil || got.State != ledger.InFlight || got.Fence != op.Fence {
		t.Fatalf("after the failed record: %s fence %d, %v", got.State, got.Fence, err)
	}
	if evs, _ := s.Events(ctx, op.Tenant, op.ID); len(evs) != 2 {
		t.Fatalf("events = %+v, want creation and claim only", evs)
	}
}
