package ledgertest

import (
	"testing"

	"settle/ledger"
)

// testSummary: the reads the API makes (Summary, List) carry every field
// but the payload; Get still carries it.
func testSummary(t *testing.T, h Harness) {
	t.Run("NoPayload", func(t *testing.T) {
		f := setup(t, h)
		op := f.inState("acme", ledger.Succeeded)
		full := f.get(op)
		if len(full.Payload) == 0 {
			t.Fatal("Get must carry the payload")
		}
		sum, err := f.store.Summary(f.ctx, op.Tenant, op.ID)
		if err != nil {
			t.Fatal(err)
		}
		page, err := f.store.List(f.ctx, ledger.ListFilter{Tenant: "acme"})
		if err != nil || len(page.Operations) != 1 {
			t.Fatalf("list: %v, %d operations", err, len(page.Operations))
		}
		for name, got := range map[string]ledger.Operation{"Summary": sum, "List": page.Operations[0]} {
			if got.Payload != nil {
				t.Errorf("%s loaded the payload (%d bytes)", name, len(got.Payload))
			}
			got.Payload = full.Payload
			sameOp(t, full, got)
			if got.RemoteRef != full.RemoteRef || got.Type != full.Type || got.IntentRef != full.IntentRef ||
				got.Target != full.Target || !got.CreatedAt.Equal(full.CreatedAt) {
				t.Errorf("%s differs from Get: %+v, want %+v", name, got, full)
			}
		}
	})
	t.Run("NotFound", func(t *testing.T) {
		f := setup(t, h)
		op := f.create("acme")
		for _, c := range []struct{ tenant, id string }{
			{"globex", op.ID}, {"acme", "00000000-0000-4000-8000-000000000000"}, {"acme", "not-a-uuid"},
		} {
			_, err := f.store.Summary(f.ctx, c.tenant, c.id)
			wantCode(t, err, ledger.ENotFound)
		}
	})
}
