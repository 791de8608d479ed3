package postgres_test

import (
	"context"
	"testing"

	"settle/ledger"
	"settle/ledger/ledgertest"
)

// An approval after the operation moved voids the proposal.
func TestStore_ProposalVoided(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ledgertest.ProposalVoided(t, s, func(op ledger.Operation) {
		if _, err := s.Pool().Exec(context.Background(), `UPDATE operation_ledger SET fence_token = fence_token + 1
			WHERE tenant_id = $1 AND operation_id = $2`, op.Tenant, op.ID); err != nil {
			t.Fatal(err)
		}
	})
}
