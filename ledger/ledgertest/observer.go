package ledgertest

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"settle/ledger"
)

// observed records what a store tells its ledger.Observer.
type observed struct {
	mu      sync.Mutex
	commits []ledger.Commit
}

func (o *observed) Committed(_ context.Context, c ledger.Commit) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.commits = append(o.commits, c)
}

// take returns what was told since the last take, one line per commit:
// "tenant/op-id from→to, …, refused tenant", in sorted order within it.
func (o *observed) take() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []string
	for _, c := range o.commits {
		var parts []string
		for _, t := range c.Transitions {
			if t.Target != "payments" || t.At.IsZero() {
				parts = append(parts, fmt.Sprintf("bad transition %+v", t))
			}
			parts = append(parts, fmt.Sprintf("%s/%s %s→%s", t.Tenant, t.OperationID, t.From, t.To))
		}
		if len(c.Refused) > 0 {
			parts = append(parts, "refused "+strings.Join(c.Refused, ", "))
		}
		sort.Strings(parts)
		out = append(out, strings.Join(parts, ", "))
	}
	o.commits = nil
	return out
}

// tr is the line take writes for op's transition.
func tr(op ledger.Operation, from, to ledger.State) string {
	return fmt.Sprintf("%s/%s %s→%s", op.Tenant, op.ID, from, to)
}

// testObserver drives one transition of every kind a store writes and
// checks that its observer was told each once, after the commit, with its
// tenant and target, and told nothing of a write that changed nothing,
// was refused or rolled back.
func testObserver(t *testing.T, h Harness) {
	f := setup(t, h)
	obs := &observed{}
	f.store.(ledger.Observable).SetObserver(obs)
	want := func(step string, lines ...string) {
		t.Helper()
		got := obs.take()
		if strings.Join(got, "\n") != strings.Join(lines, "\n") {
			t.Fatalf("%s: the observer was told\n%s\nwant\n%s", step, strings.Join(got, "\n"), strings.Join(lines, "\n"))
		}
	}

	// Creation, a repeated creation, a payload conflict, an invalid one.
	n := f.newOp("acme")
	op, _, err := f.store.Create(f.ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	want("create", tr(op, "", ledger.Prepared))
	if _, created, err := f.store.Create(f.ctx, n); err != nil || created {
		t.Fatalf("repeat: %v %v", created, err)
	}
	want("a repeated create")
	conflict := n
	conflict.Payload = []byte(`{"amount": 1}`)
	_, _, err = f.store.Create(f.ctx, conflict)
	wantCode(t, err, ledger.EPayloadConflict)
	want("a payload conflict", "refused acme")
	invalid := f.newOp("acme")
	invalid.Payload = []byte(`not json`)
	if _, _, err := f.store.Create(f.ctx, invalid); err == nil {
		t.Fatal("an invalid payload was created")
	}
	want("an invalid create")

	// Claims, one and a batch; a claim of what is not PREPARED.
	held, err := f.store.Claim(f.ctx, op.Tenant, op.ID, op.PayloadHash, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	want("claim", tr(op, ledger.Prepared, ledger.InFlight))
	if _, err := f.store.Claim(f.ctx, op.Tenant, op.ID, op.PayloadHash, time.Minute); err == nil {
		t.Fatal("claimed twice")
	}
	want("a refused claim")
	a, b := f.create("acme"), f.create("globex")
	obs.take()
	batch, err := f.store.ClaimBatch(f.ctx, 10, time.Minute)
	if err != nil || len(batch) != 2 {
		t.Fatalf("claim batch: %d %v", len(batch), err)
	}
	claimed := []string{tr(a, ledger.Prepared, ledger.InFlight), tr(b, ledger.Prepared, ledger.InFlight)}
	sort.Strings(claimed)
	want("claim batch", strings.Join(claimed, ", "))

	// Outcomes: one, a stale one, a batch with a refused row.
	f.record(held, ledger.InFlight, ledger.Succeeded)
	want("record", tr(op, ledger.InFlight, ledger.Succeeded))
	if _, err := f.store.Record(f.ctx, outcome(held, ledger.InFlight, ledger.FailedTerminal)); err == nil {
		t.Fatal("a stale outcome was recorded")
	}
	want("a stale record")
	stale := outcome(batch[0], ledger.InFlight, ledger.Succeeded)
	stale.Fence--
	errs, err := f.store.RecordBatch(f.ctx, []ledger.Outcome{stale, outcome(batch[1], ledger.InFlight, ledger.Escalated)})
	if err != nil || errs[0] == nil || errs[1] != nil {
		t.Fatalf("record batch: %v %v", errs, err)
	}
	want("record batch", tr(batch[1], ledger.InFlight, ledger.Escalated))
	if h.RefuseRemoteRef != nil {
		// The statement fails for one row; the rows recorded one by one
		// are each told once, the refused one never.
		h.RefuseRemoteRef(t, f.store, "ch_refused")
		x, y, z := f.claim("acme"), f.claim("acme"), f.claim("globex")
		obs.take()
		refused := outcome(y, ledger.InFlight, ledger.Succeeded)
		refused.RemoteRef = "ch_refused"
		errs, err := f.store.RecordBatch(f.ctx, []ledger.Outcome{outcome(x, ledger.InFlight, ledger.Succeeded),
			refused, outcome(z, ledger.InFlight, ledger.Succeeded)})
		if err != nil || errs[0] != nil || errs[1] == nil || errs[2] != nil {
			t.Fatalf("record batch with a refused row: %v %v", errs, err)
		}
		want("record batch, row by row", tr(x, ledger.InFlight, ledger.Succeeded), tr(z, ledger.InFlight, ledger.Succeeded))
	}

	// An expired lease, a reconciler looking again, its verdict.
	f.clk.Advance(2 * time.Minute)
	if _, err := f.store.SweepExpired(f.ctx); err != nil { // the claims above
		t.Fatal(err)
	}
	obs.take()
	u := f.claim("acme")
	obs.take()
	f.clk.Advance(2 * time.Minute)
	if _, err := f.store.SweepExpired(f.ctx); err != nil {
		t.Fatal(err)
	}
	want("sweep", tr(u, ledger.InFlight, ledger.Unknown))
	if _, err := f.store.SweepExpired(f.ctx); err != nil {
		t.Fatal(err)
	}
	want("a sweep with nothing to expire")
	leased := f.lease(f.get(u))
	again := outcome(leased, ledger.Unknown, ledger.Unknown)
	if _, err := f.store.Record(f.ctx, again); err != nil {
		t.Fatal(err)
	}
	want("look again", tr(u, ledger.Unknown, ledger.Unknown))
	f.record(f.lease(f.get(u)), ledger.Unknown, ledger.Succeeded)
	want("reconciled", tr(u, ledger.Unknown, ledger.Succeeded))

	// People's resolutions: a proposal, a refused approval and a rejection
	// change no operation; an approval, a replay's and a supersede's (with
	// its successor's creation) are told once; a supersede over a taken intent
	// rolls back and is told nothing.
	rs := f.store.(ledger.ResolutionStore)
	alice := f.as("oidc:alice-sub", "Alice", "owner")
	bob := f.as("oidc:bob-sub", "Bob", "owner")
	escalated := func() ledger.Operation {
		n := f.newOp("acme")
		n.Bind = refBind
		op, _, err := f.store.Create(f.ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		held, err := f.store.Claim(f.ctx, op.Tenant, op.ID, op.PayloadHash, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		op = f.record(held, ledger.InFlight, ledger.Escalated)
		obs.take()
		return op
	}
	propose := func(op ledger.Operation, r ledger.Resolution) ledger.Resolution {
		t.Helper()
		r.Tenant, r.OperationID = op.Tenant, op.ID
		r.Reason = "the provider's dashboard says so"
		got, err := rs.Propose(alice, r)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	e := escalated()
	r := propose(e, ledger.Resolution{To: ledger.Succeeded, RemoteRef: "ch_77"})
	want("propose")
	_, err = rs.Approve(alice, "acme", r.ID)
	wantCode(t, err, ledger.EForbidden)
	want("the proposer's own approval")
	if _, err := rs.Approve(bob, "acme", r.ID); err != nil {
		t.Fatal(err)
	}
	want("approve", tr(e, ledger.Escalated, ledger.Succeeded))
	e = escalated()
	r = propose(e, ledger.Resolution{Kind: ledger.KindReplay, To: ledger.KindTo(ledger.KindReplay)})
	if _, err := rs.Approve(bob, "acme", r.ID); err != nil {
		t.Fatal(err)
	}
	want("approve a replay", tr(e, ledger.Escalated, ledger.Unknown))
	e = escalated()
	r = propose(e, ledger.Resolution{To: ledger.FailedTerminal})
	if err := rs.Reject(bob, "acme", r.ID, "not yet"); err != nil {
		t.Fatal(err)
	}
	want("reject")
	r = propose(e, ledger.Resolution{Kind: ledger.KindSupersede, To: ledger.KindTo(ledger.KindSupersede)})
	_, next, err := rs.ApproveSupersede(bob, "acme", r.ID, refBind)
	if err != nil {
		t.Fatal(err)
	}
	superseded := []string{tr(e, ledger.Escalated, ledger.FailedTerminal), tr(next, "", ledger.Prepared)}
	sort.Strings(superseded)
	want("approve supersede", strings.Join(superseded, ", "))
	e = escalated()
	taken := f.newOp("acme")
	taken.IntentRef = ledger.SupersedeIntent(e.IntentRef)
	takenOp, _, err := f.store.Create(f.ctx, taken)
	if err != nil {
		t.Fatal(err)
	}
	want("the taken intent", tr(takenOp, "", ledger.Prepared))
	r = propose(e, ledger.Resolution{Kind: ledger.KindSupersede, To: ledger.KindTo(ledger.KindSupersede)})
	if _, _, err := rs.ApproveSupersede(bob, "acme", r.ID, refBind); err == nil {
		t.Fatal("a supersede over a taken intent was approved")
	}
	want("a supersede rolled back")
}
