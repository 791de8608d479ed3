package resolve_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/storetest"
	"settle/resolve"
)

type rig struct {
	t     *testing.T
	store resolve.Store
	clk   *ledgertest.Clock
	svc   *resolve.Service
	n     int
}

func newRig(t *testing.T, h ledgertest.Harness) *rig {
	clk := ledgertest.NewClockAt(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	s := h.New(t, clk.Now).(resolve.Store)
	return &rig{t: t, store: s, clk: clk, svc: resolve.New(s, nil, nil, clk.Now)}
}

var (
	olu = ledger.NewContextWithActor(context.Background(), ledger.Actor{Subject: "demo:olu", Name: "Olu", Role: "owner"})
	bea = ledger.NewContextWithActor(context.Background(), ledger.Actor{Subject: "demo:bea", Name: "Bea", Role: "owner"})
)

// op creates an operation of tenant for target and moves it to state
// (ESCALATED or UNKNOWN), with a deadline in deadline from now.
func (r *rig) op(tenant, target string, to ledger.State, deadline time.Duration) ledger.Operation {
	r.t.Helper()
	ctx := context.Background()
	r.n++
	at := r.clk.Now().Add(deadline)
	op, _, err := r.store.Create(ctx, ledger.NewOperation{Tenant: tenant, Type: "charge", Target: target,
		IntentRef: fmt.Sprintf("inv-%d", r.n), Payload: []byte(`{"amount":1}`), Deadline: &at})
	if err != nil {
		r.t.Fatal(err)
	}
	held, err := r.store.Claim(ctx, tenant, op.ID, op.PayloadHash, time.Minute)
	if err != nil {
		r.t.Fatal(err)
	}
	op, err = r.store.Record(ctx, ledger.Outcome{Tenant: tenant, OperationID: op.ID, Fence: held.Fence,
		From: ledger.InFlight, To: to, Actor: ledger.ActorExecutor, Reason: "not sent: the tenant has no account parameter",
		Evidence: map[string]any{"sent": false}})
	if err != nil {
		r.t.Fatal(err)
	}
	r.clk.Advance(time.Second) // distinct creation times order the queue
	return op
}

func ids(q resolve.Queue) []string {
	var out []string
	for _, it := range q.Items {
		out = append(out, it.Operation.ID)
	}
	return out
}

// The queue holds ESCALATED operations and UNKNOWN ones past their
// deadline, of the scope's tenants and targets only, in the asked order,
// page by page with a cursor that survives a new arrival.
func TestQueue_WhatWaitsAndForWhom(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		t.Parallel()
		r := newRig(t, h)
		e1 := r.op("acme", "payments", ledger.Escalated, time.Hour)
		overdue := r.op("acme", "payments", ledger.Unknown, time.Second)
		r.op("acme", "payments", ledger.Unknown, 48*time.Hour) // pending, not yet due: not in the queue
		e2 := r.op("acme", "payments", ledger.Escalated, 2*time.Hour)
		other := r.op("globex", "payments", ledger.Escalated, time.Hour)
		ctx := context.Background()

		q, err := r.svc.Queue(ctx, resolve.TenantScope("acme"), resolve.QueueFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := ids(q), []string{e1.ID, overdue.ID, e2.ID}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("acme's queue, oldest first: %v, want %v", got, want)
		}
		if !q.Items[1].Overdue || q.Items[0].Overdue {
			t.Errorf("overdue marks: %+v", q.Items)
		}
		for _, it := range q.Items {
			if it.Operation.ID == other.ID {
				t.Fatal("another tenant's escalation in acme's queue")
			}
		}
		q, _ = r.svc.Queue(ctx, resolve.TenantScope("acme"), resolve.QueueFilter{Show: resolve.ShowOverdue})
		if fmt.Sprint(ids(q)) != fmt.Sprint([]string{overdue.ID}) {
			t.Errorf("overdue only: %v", ids(q))
		}

		// Pages of one: a new escalation arriving between pages moves
		// nothing across them.
		p1, err := r.svc.Queue(ctx, resolve.TenantScope("acme"), resolve.QueueFilter{Limit: 1, Order: resolve.NewestFirst})
		if err != nil || fmt.Sprint(ids(p1)) != fmt.Sprint([]string{e2.ID}) || p1.Next == "" {
			t.Fatalf("page 1: %v next %q err %v", ids(p1), p1.Next, err)
		}
		r.op("acme", "payments", ledger.Escalated, time.Hour)
		p2, err := r.svc.Queue(ctx, resolve.TenantScope("acme"), resolve.QueueFilter{Limit: 1, Order: resolve.NewestFirst, Cursor: p1.Next})
		if err != nil || fmt.Sprint(ids(p2)) != fmt.Sprint([]string{overdue.ID}) {
			t.Fatalf("page 2: %v err %v", ids(p2), err)
		}

		if _, err := r.svc.Queue(ctx, resolve.TenantScope("acme"), resolve.QueueFilter{Tenant: "globex"}); ledger.ErrorCode(err) != ledger.ENotFound {
			t.Errorf("a tenant outside the scope: %v", err)
		}
		if _, err := r.svc.Queue(ctx, resolve.TenantScope("acme"), resolve.QueueFilter{Cursor: "not-a-cursor"}); ledger.ErrorCode(err) != ledger.EInvalid {
			t.Errorf("a forged cursor: %v", err)
		}
		if _, err := r.svc.Queue(ctx, resolve.TenantScope("acme"), resolve.QueueFilter{Show: "everything"}); ledger.ErrorCode(err) != ledger.EInvalid {
			t.Errorf("a bad show: %v", err)
		}
	})
}

// The proposer withdraws their own proposal; nobody else can, nor
// approve their own; an operation outside the scope reads as unknown.
func TestActions_TwoPeopleAndScope(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		t.Parallel()
		r := newRig(t, h)
		op := r.op("acme", "payments", ledger.Escalated, time.Hour)
		sc := resolve.TenantScope("acme")
		if _, err := r.svc.Propose(olu, resolve.TenantScope("globex"), "acme", op.ID,
			resolve.Proposal{Kind: ledger.KindConfirmNotApplied, Reason: "x"}); ledger.ErrorCode(err) != ledger.ENotFound {
			t.Fatalf("propose outside the scope: %v", err)
		}
		if _, err := r.svc.Propose(olu, sc, "acme", op.ID, resolve.Proposal{Kind: ledger.KindReplay, Reason: "x"}); ledger.ErrorCode(err) != ledger.EInvalid {
			t.Errorf("a replay without a contract: %v", err)
		}
		if _, err := r.svc.Propose(olu, sc, "acme", op.ID, resolve.Proposal{Kind: ledger.KindSupersede, Reason: "x"}); ledger.ErrorCode(err) != ledger.EInvalid {
			t.Errorf("a supersede without a lookup: %v", err)
		}
		if _, err := r.svc.Propose(olu, sc, "acme", op.ID, resolve.Proposal{Kind: ledger.KindConfirmNotApplied, RemoteRef: "ch_1", Reason: "x"}); ledger.ErrorCode(err) != ledger.EInvalid {
			t.Errorf("not applied with an object id: %v", err)
		}
		p, err := r.svc.Propose(olu, sc, "acme", op.ID, resolve.Proposal{Kind: ledger.KindConfirmNotApplied, Reason: "provider says no"})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.svc.Withdraw(bea, sc, "acme", p.ID, "not mine"); ledger.ErrorCode(err) != ledger.EForbidden {
			t.Errorf("withdrawn by someone else: %v", err)
		}
		if _, err := r.svc.Approve(olu, sc, "acme", p.ID, resolve.Approval{}); ledger.ErrorCode(err) != ledger.EForbidden {
			t.Errorf("approved by the proposer: %v", err)
		}
		if err := r.svc.Withdraw(olu, sc, "acme", p.ID, "wrong evidence"); err != nil {
			t.Fatalf("withdraw: %v", err)
		}
		if _, err := r.svc.Approve(bea, sc, "acme", p.ID, resolve.Approval{}); ledger.ErrorCode(err) != ledger.ENotFound {
			t.Errorf("approve a withdrawn proposal: %v", err)
		}
		p, err = r.svc.Propose(olu, sc, "acme", op.ID, resolve.Proposal{Kind: ledger.KindConfirmSucceeded, RemoteRef: "ch_9", Reason: "dashboard shows it"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.svc.Approve(bea, sc, "acme", p.ID, resolve.Approval{}); resolve.FieldOf(err) != resolve.FieldCheckedAtTarget {
			t.Fatalf("an object id settle cannot check, approved unchecked: %v", err)
		}
		d, err := r.svc.Approve(bea, sc, "acme", p.ID, resolve.Approval{CheckedAtTarget: true})
		if err != nil || d.Operation.State != ledger.Succeeded || d.Operation.RemoteRef != "ch_9" {
			t.Fatalf("approve: %+v %v", d.Operation, err)
		}
	})
}

// The four questions weigh quarantined events that name the operation:
// with nothing in the log from the target, a quarantined webhook naming
// its reference answers the first question and names the object.
func TestCase_QuarantinedEvidence(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		t.Parallel()
		r := newRig(t, h)
		op := r.op("acme", "payments", ledger.Escalated, time.Hour)
		unrelated := r.op("acme", "payments", ledger.Escalated, time.Hour)
		inbox := r.store.(ledger.InboxStore)
		ctx := context.Background()
		if _, err := inbox.Quarantine(ctx, ledger.QuarantineItem{Target: "payments", Reason: "tenant does not match",
			EventID: "evt_1", Reference: op.RemoteKey, Tenant: "acme", RemoteID: "ch_seen", At: r.clk.Now()}); err != nil {
			t.Fatal(err)
		}
		k, err := r.svc.Case(ctx, resolve.TenantScope("acme"), "acme", op.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(k.Quarantined) != 1 || k.Said.Quarantined == nil || k.Match.Named == nil || k.Match.RemoteID != "ch_seen" || k.Match.Known {
			t.Fatalf("case: quarantined %+v said %+v match %+v", k.Quarantined, k.Said, k.Match)
		}
		if k.Said.Event != nil {
			t.Errorf("the executor's own 'no answer' counted as the target speaking: %+v", k.Said.Event)
		}
		if len(k.Kinds) != 2 || k.NoSupersede == "" || k.Replay.Possible {
			t.Errorf("without a contract: kinds %v, no supersede %q, replay %+v", k.Kinds, k.NoSupersede, k.Replay)
		}
		k2, err := r.svc.Case(ctx, resolve.TenantScope("acme"), "acme", unrelated.ID)
		if err != nil || len(k2.Quarantined) != 0 {
			t.Errorf("another operation's case holds %+v (%v)", k2.Quarantined, err)
		}
		if _, err := r.svc.Case(ctx, resolve.TenantScope("globex"), "acme", op.ID); ledger.ErrorCode(err) != ledger.ENotFound {
			t.Errorf("a case outside the scope: %v", err)
		}
	})
}
