package postgres_test

import (
	"context"
	"testing"
	"time"

	"settle/ledger"
)

// The notification is written by the statement that records the
// transition: when it cannot be written, the transition is not applied
// either, so a final state never exists without its notification.
func TestStore_CallbackSameStatement(t *testing.T) {
	ctx := context.Background()
	s, clk := newStore(t)
	secret := []byte("scs_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG")
	if err := s.SetCallback(ctx, "acme", "https://hooks.example.com/settle", secret, clk.Now()); err != nil {
		t.Fatal(err)
	}
	op, _, err := s.Create(ctx, newOp("order-1"))
	if err != nil {
		t.Fatal(err)
	}
	op, err = s.Claim(ctx, op.Tenant, op.ID, op.PayloadHash, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Pool().Exec(ctx, `
CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'outbox refused'; END; $$;
CREATE TRIGGER refuse BEFORE INSERT ON callback_outbox FOR EACH ROW EXECUTE FUNCTION refuse();`)
	if err != nil {
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
