package ledgertest

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"settle/ledger"
)

func inboxOf(t *testing.T, f *fixture) ledger.InboxStore {
	t.Helper()
	in, ok := f.store.(ledger.InboxStore)
	if !ok {
		t.Fatal("store does not implement ledger.InboxStore")
	}
	return in
}

func testInbox(t *testing.T, h Harness) {
	t.Run("Deliveries", func(t *testing.T) {
		f := setup(t, h)
		in := inboxOf(t, f)
		body := []byte(`{"id":"evt_1","data":{}}`)
		id, dup, err := in.Receive(f.ctx, "payments", body)
		if err != nil || dup || id == 0 {
			t.Fatalf("receive: %d %v %v", id, dup, err)
		}
		again, dup, err := in.Receive(f.ctx, "payments", body)
		if err != nil || !dup || again != id {
			t.Fatalf("redelivery: %d %v %v", again, dup, err)
		}
		if other, dup, _ := in.Receive(f.ctx, "shipping", body); dup || other == id {
			t.Fatal("the same body for another target is another delivery")
		}
		ds, err := in.ClaimDeliveries(f.ctx, 10, time.Minute)
		if err != nil || len(ds) != 2 || ds[0].ID != id || string(ds[0].Body) != string(body) || ds[0].Attempts != 1 {
			t.Fatalf("claim: %+v %v", ds, err)
		}
		if more, _ := in.ClaimDeliveries(f.ctx, 10, time.Minute); len(more) != 0 {
			t.Fatal("a claimed delivery was handed out again")
		}
		if err := in.FinishDelivery(f.ctx, id, "matched"); err != nil {
			t.Fatal(err)
		}
		if err := in.DeferDelivery(f.ctx, ds[1].ID, f.clk.Now().Add(10*time.Second), "operation in flight"); err != nil {
			t.Fatal(err)
		}
		f.clk.Advance(11 * time.Second)
		ds, _ = in.ClaimDeliveries(f.ctx, 10, time.Minute)
		if len(ds) != 1 || ds[0].Target != "shipping" || ds[0].Attempts != 2 || ds[0].Outcome != "operation in flight" {
			t.Fatalf("after defer: %+v", ds)
		}
		f.clk.Advance(2 * time.Minute) // the lease lapses: due again
		if ds, _ := in.ClaimDeliveries(f.ctx, 10, time.Minute); len(ds) != 1 {
			t.Fatalf("after the lease: %d", len(ds))
		}
		if _, dup, _ := in.Receive(f.ctx, "payments", body); !dup {
			t.Fatal("a processed delivery's redelivery must stay a duplicate")
		}
	})

	t.Run("Quarantine", func(t *testing.T) {
		f := setup(t, h)
		in := inboxOf(t, f)
		a, err := in.Quarantine(f.ctx, ledger.QuarantineItem{Target: "payments", Reason: "no tenant", EventID: "evt_1", Reference: "r"})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := in.Quarantine(f.ctx, ledger.QuarantineItem{Target: "payments", Reason: "contradicts", OperationID: "x", OpTenant: "acme"})
		all := ledger.QuarantineFilter{Open: true, AllTenants: true, Unattributed: true}
		open, err := in.ListQuarantine(f.ctx, all)
		if err != nil || len(open) != 2 || open[0].ID != b || open[1].EventID != "evt_1" || open[0].OpTenant != "acme" {
			t.Fatalf("open: %+v %v", open, err)
		}
		if err := in.ResolveQuarantine(f.ctx, "", a, ""); ledger.ErrorCode(err) != ledger.EInvalid {
			t.Fatalf("no decision: %v", err)
		}
		if err := in.ResolveQuarantine(context.Background(), "", a, "x"); ledger.ErrorCode(err) != ledger.EInvalid {
			t.Fatalf("no reviewer: %v", err)
		}
		// The unattributed item is found only as unattributed.
		if err := in.ResolveQuarantine(f.ctx, "acme", a, "x"); ledger.ErrorCode(err) != ledger.ENotFound {
			t.Fatalf("a tenant resolved an unattributed item: %v", err)
		}
		alice := f.as("oidc:alice", "Alice", "owner")
		if err := in.ResolveQuarantine(alice, "", a, "foreign event, ignored"); err != nil {
			t.Fatal(err)
		}
		if err := in.ResolveQuarantine(alice, "", a, "again"); ledger.ErrorCode(err) != ledger.ENotFound {
			t.Fatalf("resolve twice: %v", err)
		}
		open, _ = in.ListQuarantine(f.ctx, all)
		all.Open = false
		every, _ := in.ListQuarantine(f.ctx, all)
		if len(open) != 1 || len(every) != 2 || every[1].ResolvedBy != "oidc:alice" || every[1].ResolvedByName != "Alice" || every[1].ResolvedAt == nil {
			t.Fatalf("open %d, all %+v", len(open), every)
		}
		acts, err := f.store.(ledger.ActionStore).Actions(f.ctx, ledger.ActionFilter{Unattributed: true})
		if err != nil || len(acts) != 1 || acts[0].Kind != ledger.ActionQuarantineResolve || acts[0].Object != strconv.FormatInt(a, 10) ||
			acts[0].Subject != "oidc:alice" || acts[0].Reason != "foreign event, ignored" {
			t.Fatalf("actions %+v %v", acts, err)
		}
	})

	t.Run("QuarantineTenants", func(t *testing.T) {
		f := setup(t, h)
		in := inboxOf(t, f)
		none, _ := in.Quarantine(f.ctx, ledger.QuarantineItem{Target: "payments", Reason: "no tenant"})
		acme, _ := in.Quarantine(f.ctx, ledger.QuarantineItem{Target: "payments", Reason: "unknown reference", Tenant: "acme"})
		globex, _ := in.Quarantine(f.ctx, ledger.QuarantineItem{Target: "payments", Reason: "contradicts",
			Tenant: "globex", OperationID: "op-g", OpTenant: "globex"})
		// Claims globex, but concerns acme's operation: acme's to review,
		// never shown to globex as theirs.
		cross, _ := in.Quarantine(f.ctx, ledger.QuarantineItem{Target: "payments", Reason: "tenant mismatch",
			Tenant: "globex", OperationID: "op-a", OpTenant: "acme"})
		ids := func(f ledger.QuarantineFilter) []int64 {
			t.Helper()
			items, err := in.ListQuarantine(context.Background(), f)
			if err != nil {
				t.Fatal(err)
			}
			var out []int64
			for _, q := range items {
				out = append(out, q.ID)
			}
			return out
		}
		for name, c := range map[string]struct {
			f    ledger.QuarantineFilter
			want []int64
		}{
			"Acme":             {ledger.QuarantineFilter{Tenants: []string{"acme"}}, []int64{cross, acme}},
			"Globex":           {ledger.QuarantineFilter{Tenants: []string{"globex"}}, []int64{globex}},
			"Both":             {ledger.QuarantineFilter{Tenants: []string{"acme", "globex"}}, []int64{cross, globex, acme}},
			"Nobody":           {ledger.QuarantineFilter{}, nil},
			"Other":            {ledger.QuarantineFilter{Tenants: []string{"initech"}}, nil},
			"EmptyTenantName":  {ledger.QuarantineFilter{Tenants: []string{""}}, nil},
			"Unattributed":     {ledger.QuarantineFilter{Unattributed: true}, []int64{none}},
			"AllTenants":       {ledger.QuarantineFilter{AllTenants: true}, []int64{cross, globex, acme}},
			"AllAndUnassigned": {ledger.QuarantineFilter{AllTenants: true, Unattributed: true}, []int64{cross, globex, acme, none}},
		} {
			if got := ids(c.f); !slices.Equal(got, c.want) {
				t.Errorf("%s: %v, want %v", name, got, c.want)
			}
		}
		owner := f.as("oidc:g", "G", "owner")
		for _, c := range []struct {
			tenant string
			id     int64
		}{{"globex", acme}, {"globex", cross}, {"acme", globex}, {"acme", none}, {"globex", 999999}} {
			if err := in.ResolveQuarantine(owner, c.tenant, c.id, "mine?"); ledger.ErrorCode(err) != ledger.ENotFound {
				t.Errorf("%s resolved item %d: %v, want %s", c.tenant, c.id, err, ledger.ENotFound)
			}
		}
		if err := in.ResolveQuarantine(owner, "acme", cross, "evidence about our operation"); err != nil {
			t.Fatal(err)
		}
		if acts := actionsOf(t, f, "acme", "op-a"); len(acts) != 1 || acts[0].Tenant != "acme" {
			t.Fatalf("actions %+v", acts)
		}
	})

	t.Run("LeaseOperation", func(t *testing.T) {
		f := setup(t, h)
		in := inboxOf(t, f)
		op := f.unknown("acme")
		got, err := in.LeaseOperation(f.ctx, "acme", op.ID, time.Minute)
		if err != nil || got.Fence != op.Fence+1 || got.State != ledger.Unknown {
			t.Fatalf("lease: %+v %v", got, err)
		}
		if _, err := in.LeaseOperation(f.ctx, "acme", op.ID, time.Minute); ledger.ErrorCode(err) != ledger.EStaleFence {
			t.Fatalf("held: %v", err)
		}
		if _, err := in.LeaseOperation(f.ctx, "globex", op.ID, time.Minute); ledger.ErrorCode(err) != ledger.ENotFound {
			t.Fatalf("other tenant: %v", err)
		}
		if _, err := in.LeaseOperation(f.ctx, "acme", f.claim("acme").ID, time.Minute); ledger.ErrorCode(err) != ledger.EStaleFence {
			t.Fatalf("in flight: %v", err)
		}
		f.clk.Advance(2 * time.Minute)
		again, err := in.LeaseOperation(f.ctx, "acme", op.ID, time.Minute)
		if err != nil || again.Fence != got.Fence+1 {
			t.Fatalf("after expiry: %+v %v", again, err)
		}
		if _, err := f.store.Record(f.ctx, outcome(got, ledger.Unknown, ledger.Succeeded)); ledger.ErrorCode(err) != ledger.EStaleFence {
			t.Fatalf("the first holder's record after a re-lease: %v", err)
		}
	})
}
