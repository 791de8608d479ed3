package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"settle/ledger/ledgertest"
	"settle/ledger/sqlite"
)

// The notification is written in the transaction that records the
// transition: when it cannot be written, the transition is not applied
// either, so a final state never exists without its notification.
func TestStore_CallbackSameTransaction(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "settle.db")
	s, err := sqlite.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ledgertest.CallbackAtomicity(t, s, func() {
		raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		if _, err := raw.Exec(`CREATE TRIGGER refuse BEFORE INSERT ON callback_outbox
			BEGIN SELECT RAISE(ABORT, 'outbox refused'); END`); err != nil {
			t.Fatal(err)
		}
	})
}
