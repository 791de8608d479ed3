package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/sqlite"
)

// An approval after the operation moved voids the proposal.
func TestStore_ProposalVoided(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "settle.db")
	s, err := sqlite.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	ledgertest.ProposalVoided(t, s, func(op ledger.Operation) {
		if _, err := raw.Exec(`UPDATE operation_ledger SET fence_token = fence_token + 1
			WHERE tenant_id = ? AND operation_id = ?`, op.Tenant, op.ID); err != nil {
			t.Fatal(err)
		}
	})
}
