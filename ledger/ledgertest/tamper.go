package ledgertest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"settle/ledger"
)

// testTamper covers what the schema itself refuses or survives when rows
// are changed behind the ledger's back (Harness.Exec).
func testTamper(t *testing.T, h Harness) {
	if h.Exec == nil {
		t.Fatal("the harness cannot run SQL directly (Harness.Exec)")
	}
	// The record of human actions is append-only, like the event log.
	t.Run("ActionsAreAppendOnly", func(t *testing.T) {
		t.Parallel()
		s := h.New(t, nil)
		ctx := ledger.NewContextWithActor(context.Background(), ledger.Actor{Subject: "cli:ada", Name: "ada", Role: "admin"})
		if err := s.(ledger.CallbackStore).SetCallback(ctx, "acme", "https://acme.example/cb", make([]byte, 32), time.Now()); err != nil {
			t.Fatal(err)
		}
		for _, stmt := range []string{`UPDATE actions SET subject = 'cli:mallory'`, `DELETE FROM actions`} {
			if err := h.Exec(t, s, stmt); err == nil || !strings.Contains(err.Error(), "append-only") {
				t.Fatalf("%s: err = %v", stmt, err)
			}
		}
		acts, err := s.(ledger.ActionStore).Actions(ctx, ledger.ActionFilter{Tenant: "acme"})
		if err != nil || len(acts) != 1 || acts[0].Subject != "cli:ada" {
			t.Fatalf("actions %+v, %v", acts, err)
		}
	})
	// An approval after the operation moved voids the proposal.
	t.Run("ProposalVoided", func(t *testing.T) {
		t.Parallel()
		s := h.New(t, nil)
		ProposalVoided(t, s, func(op ledger.Operation) {
			// The tenant and id are the test's own, not input.
			err := h.Exec(t, s, fmt.Sprintf(`UPDATE operation_ledger SET fence_token = fence_token + 1
				WHERE tenant_id = '%s' AND operation_id = '%s'`, op.Tenant, op.ID))
			if err != nil {
				t.Fatal(err)
			}
		})
	})
}
