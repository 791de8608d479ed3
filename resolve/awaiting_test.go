package resolve_test

import (
	"context"
	"testing"
	"time"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/storetest"
	"settle/resolve"
)

// targetScope resolves one target of one tenant, as an owner bound to it.
type targetScope struct{ tenant, target string }

func (s targetScope) ResolveTenants() (bool, []string) { return false, []string{s.tenant} }
func (s targetScope) CanResolve(tenant, target string) bool {
	return tenant == s.tenant && target == s.target
}

// What awaits a person is someone else's open proposal on a target they
// resolve, never their own, counted up to a cap; the count is the length
// of the queue's "awaiting my approval" list.
func TestAwaitingCount_OthersProposalsOnMyTargets(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		t.Parallel()
		r := newRig(t, h)
		sc := resolve.TenantScope("acme")
		propose := func(who context.Context, op ledger.Operation) {
			t.Helper()
			if _, err := r.svc.Propose(who, sc, "acme", op.ID,
				resolve.Proposal{Kind: ledger.KindConfirmNotApplied, Reason: "provider shows nothing"}); err != nil {
				t.Fatal(err)
			}
		}
		byOlu := []ledger.Operation{r.op("acme", "payments", ledger.Escalated, time.Hour),
			r.op("acme", "payments", ledger.Escalated, time.Hour), r.op("acme", "payments", ledger.Escalated, time.Hour)}
		for _, op := range byOlu {
			propose(olu, op)
		}
		propose(bea, r.op("acme", "payments", ledger.Escalated, time.Hour))
		propose(olu, r.op("acme", "refunds", ledger.Escalated, time.Hour))
		r.op("acme", "payments", ledger.Escalated, time.Hour) // no proposal: awaits a proposal, not an approval

		for name, tc := range map[string]struct {
			who       context.Context
			sc        resolve.Scope
			limit     int
			n         int
			more      bool
			listLen   int // the queue's "awaiting my approval" list
			listLimit int
		}{
			"BeaSeesOlus":         {bea, sc, 99, 4, false, 4, 100},
			"OluSeesBeasOnly":     {olu, sc, 99, 1, false, 1, 100},
			"PaymentsOwnerOnly":   {bea, targetScope{"acme", "payments"}, 99, 3, false, 3, 100},
			"CappedWithMore":      {bea, sc, 2, 2, true, 4, 100},
			"AnotherTenantNobody": {bea, resolve.TenantScope("globex"), 99, 0, false, 0, 100},
		} {
			t.Run(name, func(t *testing.T) {
				n, more, err := r.svc.AwaitingCount(tc.who, tc.sc, tc.limit)
				if err != nil || n != tc.n || more != tc.more {
					t.Fatalf("count: %d more %v err %v, want %d more %v", n, more, err, tc.n, tc.more)
				}
				q, err := r.svc.Queue(tc.who, tc.sc, resolve.QueueFilter{AwaitingMe: true, Limit: tc.listLimit})
				if err != nil || len(q.Items) != tc.listLen {
					t.Fatalf("the awaiting-me list: %d items, err %v; want %d", len(q.Items), err, tc.listLen)
				}
			})
		}
		if _, _, err := r.svc.AwaitingCount(context.Background(), sc, 99); ledger.ErrorCode(err) != ledger.EInvalid {
			t.Errorf("a count without a person: %v", err)
		}
	})
}
