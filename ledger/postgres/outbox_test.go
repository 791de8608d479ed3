package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/postgres"
	"settle/ledger/postgres/pgtest"
)

func newStore(t *testing.T) (*postgres.Store, *ledgertest.Clock) {
	t.Helper()
	clk := ledgertest.NewClock()
	return postgres.New(pgtest.Pool(t, pgtest.Schema(t)), clk.Now), clk
}

func newOp(intent string) ledger.NewOperation {
	return ledger.NewOperation{Tenant: "acme", Type: "charge", IntentRef: intent, Target: "payments",
		Payload: []byte(`{"amount":100}`)}
}

// Rule 5: the ledger row is written in the caller's own transaction, so it
// exists exactly when the caller's work does.
func TestStore_CreateTx(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newStore(t)

	t.Run("RolledBack", func(t *testing.T) {
		tx, err := s.Pool().Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		op, created, err := s.CreateTx(ctx, tx, newOp("order-1"))
		if err != nil || !created {
			t.Fatalf("created=%v err=%v", created, err)
		}
		if _, err := s.Get(ctx, "acme", op.ID); ledger.ErrorCode(err) != ledger.ENotFound {
			t.Fatalf("uncommitted operation visible outside its transaction: %v", err)
		}
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, "acme", op.ID); ledger.ErrorCode(err) != ledger.ENotFound {
			t.Fatalf("rolled-back operation exists: %v", err)
		}
		if ops, _ := s.ClaimBatch(ctx, 10, time.Minute); len(ops) != 0 {
			t.Fatal("rolled-back operation was claimable")
		}
	})

	t.Run("Committed", func(t *testing.T) {
		tx, err := s.Pool().Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// The caller's own write in the same transaction.
		if _, err := tx.Exec(ctx, `CREATE TABLE orders (id text PRIMARY KEY)`); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO orders VALUES ('order-2')`); err != nil {
			t.Fatal(err)
		}
		op, _, err := s.CreateTx(ctx, tx, newOp("order-2"))
		if err != nil {
			t.Fatal(err)
		}
		if ops, _ := s.ClaimBatch(ctx, 10, time.Minute); len(ops) != 0 {
			t.Fatal("operation claimable before its transaction committed")
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		ops, err := s.ClaimBatch(ctx, 10, time.Minute)
		if err != nil || len(ops) != 1 || ops[0].ID != op.ID {
			t.Fatalf("claimed %d after commit, %v", len(ops), err)
		}
	})
}

func TestStore_EventLogIsAppendOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newStore(t)
	op, _, err := s.Create(ctx, newOp("x"))
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`UPDATE operation_events SET reason = 'rewritten'`,
		`DELETE FROM operation_events`,
	} {
		_, err := s.Pool().Exec(ctx, stmt)
		if err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Fatalf("%s: err = %v", stmt, err)
		}
	}
	if evs, _ := s.Events(ctx, "acme", op.ID); len(evs) != 1 || evs[0].Reason != "created" {
		t.Fatalf("events = %+v", evs)
	}
}

// A row altered behind the ledger's back is escalated at claim and never
// handed to a sender.
func TestStore_ClaimRejectsTamperedPayload(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newStore(t)
	op, _, err := s.Create(ctx, newOp("x"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Pool().Exec(ctx, `UPDATE operation_ledger SET payload = '{"amount":999}'`); err != nil {
		t.Fatal(err)
	}
	ops, err := s.ClaimBatch(ctx, 10, time.Minute)
	if err != nil || len(ops) != 0 {
		t.Fatalf("claimed %d tampered operations, %v", len(ops), err)
	}
	got, _ := s.Get(ctx, "acme", op.ID)
	if got.State != ledger.Escalated || got.Reason != ledger.ReasonPayloadTampered {
		t.Fatalf("tampered operation is %s (%q)", got.State, got.Reason)
	}
}

func TestOpen_Errors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for name, url := range map[string]string{
		"Malformed":   "postgres://user:s3cret@host:notaport/db",
		"Unreachable": "postgres://user:s3cret@127.0.0.1:1/db?connect_timeout=2",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := postgres.Open(ctx, url)
			if err == nil {
				t.Fatal("no error")
			}
			if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error must be one line without the password: %q", err)
			}
		})
	}
}
