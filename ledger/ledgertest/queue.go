package ledgertest

import (
	"cmp"
	"slices"
	"strings"
	"testing"
	"time"

	"settle/ledger"
)

// testQueue checks ledger.QueueLister: what waits for a person, in
// creation order, keyset-paginated, with its filters and the tenant
// predicate; boundary cases: empty, exactly one page, ties on created_at.
func testQueue(t *testing.T, h Harness) {
	lister := func(f *fixture) ledger.QueueLister {
		f.t.Helper()
		ql, ok := f.store.(ledger.QueueLister)
		if !ok {
			f.t.Fatal("store does not implement ledger.QueueLister")
		}
		return ql
	}
	all := func(t *testing.T, f *fixture, qf ledger.QueueFilter) []string {
		t.Helper()
		var ids []string
		for pages := 0; ; pages++ {
			page, err := lister(f).ListQueue(f.ctx, qf)
			if err != nil {
				t.Fatal(err)
			}
			for _, op := range page.Operations {
				ids = append(ids, op.ID)
			}
			if page.Next == "" {
				return ids
			}
			if pages > 100 {
				t.Fatal("no last page")
			}
			qf.Cursor = page.Next
		}
	}
	t.Run("Empty", func(t *testing.T) {
		f := setup(t, h)
		f.inState("acme", ledger.Succeeded)
		page, err := lister(f).ListQueue(f.ctx, ledger.QueueFilter{Tenant: "acme", Now: f.clk.Now()})
		if err != nil || len(page.Operations) != 0 || page.Next != "" {
			t.Fatalf("empty queue: %+v, %v", page, err)
		}
	})
	t.Run("ExactlyOnePage", func(t *testing.T) {
		f := setup(t, h)
		for range 3 {
			f.inState("acme", ledger.Escalated)
		}
		page, err := lister(f).ListQueue(f.ctx, ledger.QueueFilter{Tenant: "acme", Now: f.clk.Now(), Limit: 3})
		if err != nil || len(page.Operations) != 3 || page.Next != "" {
			t.Fatalf("one full page: %d operations, next %q, %v", len(page.Operations), page.Next, err)
		}
	})
	t.Run("OrderTiesAndKinds", func(t *testing.T) {
		f := setup(t, h)
		var want []ledger.Operation
		for i := range 7 {
			want = append(want, f.inState("acme", ledger.Escalated))
			if i%3 == 2 {
				f.clk.Advance(time.Millisecond) // the others share a created_at
			}
		}
		// UNKNOWN past its deadline waits; UNKNOWN before it, or without
		// one, does not.
		n := f.newOp("acme")
		deadline := f.clk.Now().Add(time.Hour)
		n.Deadline = &deadline
		overdue := f.unknownFrom(n)
		f.unknown("acme")
		later := f.newOp("acme")
		far := f.clk.Now().Add(48 * time.Hour)
		later.Deadline = &far
		f.unknownFrom(later)
		f.inState("globex", ledger.Escalated)
		f.inState("acme", ledger.Succeeded)
		want = append(want, overdue)
		slices.SortFunc(want, func(a, b ledger.Operation) int {
			return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
		})
		ids := func(ops []ledger.Operation) []string {
			var out []string
			for _, op := range ops {
				out = append(out, op.ID)
			}
			return out
		}
		now := deadline.Add(time.Second)
		for _, scope := range []ledger.QueueFilter{{Tenant: "acme"}, {Tenants: []string{"acme", "initech"}},
			{AllTenants: true, Tenant: "acme"}} {
			scope.Now, scope.Limit = now, 2
			if got := all(t, f, scope); !slices.Equal(got, ids(want)) {
				t.Fatalf("scope %+v, oldest first:\n got %v\nwant %v", scope, got, ids(want))
			}
			scope.Newest = true
			rev := slices.Clone(ids(want))
			slices.Reverse(rev)
			if got := all(t, f, scope); !slices.Equal(got, rev) {
				t.Fatalf("scope %+v, newest first:\n got %v\nwant %v", scope, got, rev)
			}
		}
		got := all(t, f, ledger.QueueFilter{Tenant: "acme", Now: now, Overdue: true})
		if !slices.Equal(got, []string{overdue.ID}) {
			t.Fatalf("overdue only: %v, want %s", got, overdue.ID)
		}
		if got := all(t, f, ledger.QueueFilter{Tenant: "acme", Now: deadline.Add(-time.Second), Overdue: true}); len(got) != 0 {
			t.Fatalf("overdue before the deadline: %v", got)
		}
		if got := all(t, f, ledger.QueueFilter{Tenant: "acme", Now: now, Escalated: true}); len(got) != 7 || slices.Contains(got, overdue.ID) {
			t.Fatalf("escalated only: %v", got)
		}
		if got := all(t, f, ledger.QueueFilter{AllTenants: true, Now: now}); len(got) != 9 {
			t.Fatalf("every tenant: %d, want 9", len(got))
		}
		// Another tenant's name narrows a scope that lacks it to nothing.
		if got := all(t, f, ledger.QueueFilter{Tenants: []string{"acme"}, Tenant: "globex", Now: now}); len(got) != 0 {
			t.Fatalf("tenant outside the scope: %v", got)
		}
	})
	t.Run("Filters", func(t *testing.T) {
		f := setup(t, h)
		a := f.createIn("acme", "payments", ledger.Escalated)
		f.clk.Advance(time.Hour)
		b := f.createIn("acme", "transfers", ledger.Escalated)
		c := f.claim("acme")
		c, err := f.store.Record(f.ctx, ledger.Outcome{Tenant: c.Tenant, OperationID: c.ID, Fence: c.Fence,
			From: ledger.InFlight, To: ledger.Escalated, Actor: ledger.ActorExecutor,
			Reason: "Deadline passed: 100%_sure nothing", Evidence: map[string]any{"status": 500}})
		if err != nil {
			t.Fatal(err)
		}
		g := f.createIn("globex", "payments", ledger.Escalated)
		now := f.clk.Now()
		rs := f.store.(ledger.ResolutionStore)
		alice := f.as("oidc:alice", "Alice", "owner")
		if _, err := rs.Propose(alice, ledger.Resolution{Tenant: b.Tenant, OperationID: b.ID, To: ledger.FailedTerminal,
			Reason: "the provider has nothing"}); err != nil {
			t.Fatal(err)
		}
		before := now.Add(-30 * time.Minute)
		for name, c := range map[string]struct {
			f    ledger.QueueFilter
			want []string
		}{
			"Target":          {ledger.QueueFilter{Target: "transfers"}, []string{b.ID}},
			"IntentRef":       {ledger.QueueFilter{Ref: " " + a.IntentRef + " "}, []string{a.ID}},
			"IntentRefCase":   {ledger.QueueFilter{Ref: strings.ToUpper(a.IntentRef)}, []string{a.ID}},
			"ID":              {ledger.QueueFilter{Ref: strings.ToUpper(b.ID)}, []string{b.ID}},
			"IDPrefix":        {ledger.QueueFilter{Ref: c.ID[:13]}, []string{c.ID}},
			"OtherTenantsRef": {ledger.QueueFilter{Ref: g.IntentRef}, nil},
			"Reason":          {ledger.QueueFilter{Reason: "100%_SURE"}, []string{c.ID}},
			"ReasonWildcard":  {ledger.QueueFilter{Reason: "0%x"}, nil},
			"Age":             {ledger.QueueFilter{CreatedBefore: &before}, []string{a.ID}},
			"AwaitingOthers":  {ledger.QueueFilter{AwaitingOthersOf: "oidc:bob"}, []string{b.ID}},
			"AwaitingOwn":     {ledger.QueueFilter{AwaitingOthersOf: "oidc:alice"}, nil},
		} {
			c.f.Tenant, c.f.Now = "acme", now
			if got := all(t, f, c.f); !slices.Equal(got, c.want) {
				t.Errorf("%s: %v, want %v", name, got, c.want)
			}
		}
	})
	t.Run("Invalid", func(t *testing.T) {
		f := setup(t, h)
		for name, qf := range map[string]ledger.QueueFilter{
			"NoTenant": {Now: f.clk.Now()},
			"NoNow":    {Tenant: "acme"},
			"Cursor":   {Tenant: "acme", Now: f.clk.Now(), Cursor: "not-a-cursor"},
			"Limit":    {Tenant: "acme", Now: f.clk.Now(), Limit: ledger.MaxListLimit + 1},
		} {
			_, err := lister(f).ListQueue(f.ctx, qf)
			if ledger.ErrorCode(err) != ledger.EInvalid {
				t.Errorf("%s: %v, want EInvalid", name, err)
			}
		}
	})
}

// unknownFrom creates n and drives it to UNKNOWN through lease expiry.
func (f *fixture) unknownFrom(n ledger.NewOperation) ledger.Operation {
	f.t.Helper()
	op, _, err := f.store.Create(f.ctx, n)
	if err != nil {
		f.t.Fatalf("create: %v", err)
	}
	if op, err = f.store.Claim(f.ctx, op.Tenant, op.ID, op.PayloadHash, time.Second); err != nil {
		f.t.Fatalf("claim: %v", err)
	}
	f.clk.Advance(2 * time.Second)
	if _, err := f.store.SweepExpired(f.ctx); err != nil {
		f.t.Fatalf("sweep: %v", err)
	}
	return f.get(op)
}
