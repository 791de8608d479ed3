package reconciler_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/storetest"
	"settle/reconciler"
	"settle/target/sim"
)

// escalatedAfterClaim registers an operation, claims it (as the executor
// does before it sends) and escalates it with nothing sent, as when the
// first answer was lost and no lookup settled it.
func (r *rig) escalatedAfterClaim(intent string) ledger.Operation {
	r.t.Helper()
	op := r.create("acme", intent, 700)
	claimed, err := r.store.Claim(r.ctx, op.Tenant, op.ID, op.PayloadHash, time.Minute)
	if err != nil {
		r.t.Fatal(err)
	}
	got, err := r.store.Record(r.ctx, ledger.Outcome{Tenant: op.Tenant, OperationID: op.ID, Fence: claimed.Fence,
		From: ledger.InFlight, To: ledger.Escalated, Actor: ledger.ActorExecutor, Reason: "answer lost"})
	if err != nil {
		r.t.Fatal(err)
	}
	return got
}

// authoriseReplay has one owner propose, and another approve, one same-key
// replay of op.
func (r *rig) authoriseReplay(op ledger.Operation) ledger.Operation {
	r.t.Helper()
	rs := r.store.(ledger.ResolutionStore)
	as := func(sub string) context.Context {
		return ledger.NewContextWithActor(r.ctx, ledger.Actor{Subject: sub, Name: sub, Role: "owner"})
	}
	p, err := rs.Propose(as("oidc:alice"), ledger.Resolution{Tenant: op.Tenant, OperationID: op.ID,
		Kind: ledger.KindReplay, To: ledger.Unknown, Reason: "nothing at the target; replay while the key is kept"})
	if err != nil {
		r.t.Fatal(err)
	}
	got, err := rs.Approve(as("oidc:bob"), op.Tenant, p.ID)
	if err != nil {
		r.t.Fatal(err)
	}
	return got
}

// reconcileOnce leases what is due and resolves and records each, as one
// round of the reconciler does; it returns how many it leased.
func (r *rig) reconcileOnce(rec *reconciler.Reconciler) int {
	r.t.Helper()
	ops, err := r.store.LeaseUnknown(r.ctx, 50, time.Minute)
	if err != nil {
		r.t.Fatal(err)
	}
	for _, op := range ops {
		if _, err := r.store.Record(r.ctx, rec.Resolve(r.ctx, op)); err != nil {
			r.t.Fatal(err)
		}
	}
	return len(ops)
}

// An approved replay is sent exactly once with the same key and bytes; a
// conclusive answer settles the operation.
func TestReconciler_AuthorisedReplaySucceeds(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "A"}, nil)
		op := r.authoriseReplay(r.escalatedAfterClaim("order-1"))
		if op.State != ledger.Unknown || op.Reason != ledger.ReasonReplayAuthorised {
			t.Fatalf("after approval: %s %q", op.State, op.Reason)
		}
		rec := r.reconciler()
		if n := r.reconcileOnce(rec); n != 1 {
			t.Fatalf("leased %d, want the approved operation", n)
		}
		got := r.get(op)
		objs := r.sim.Objects()
		if got.State != ledger.Succeeded || r.sim.Requests() != 1 || len(objs) != 1 ||
			objs[0].IdempotencyKey != op.RemoteKey {
			t.Fatalf("state %s after %d requests, objects %+v", got.State, r.sim.Requests(), objs)
		}
	})
}

// An inconclusive authorised replay goes back to the owners: ESCALATED
// again, and never a second replay.
func TestReconciler_AuthorisedReplayInconclusiveEscalates(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "A"}, nil)
		r.sim.Script(sim.FailBeforeCommit)
		op := r.authoriseReplay(r.escalatedAfterClaim("order-1"))
		rec := r.reconciler()
		r.reconcileOnce(rec)
		got := r.get(op)
		if got.State != ledger.Escalated || !strings.Contains(got.Reason, "authorised replay settled nothing") ||
			r.sim.Requests() != 1 {
			t.Fatalf("state %s %q after %d requests", got.State, got.Reason, r.sim.Requests())
		}
		if n := r.reconcileOnce(rec); n != 0 || r.sim.Requests() != 1 {
			t.Fatalf("a second round leased %d and sent %d requests", n, r.sim.Requests())
		}
	})
}

// A window that closed between the approval and the reconciler's round is
// never replayed into.
func TestReconciler_AuthorisedReplayWindowClosed(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		clk := ledgertest.NewClock()
		r := newRigAt(t, h, sim.Config{Class: "A"}, nil, clk.Now)
		op := r.authoriseReplay(r.escalatedAfterClaim("order-1"))
		clk.Advance(op.RetryWindowEnd.Sub(clk.Now()) - r.c.Timeout) // inside the margin
		rec := r.reconciler()
		rec.Now = clk.Now
		r.reconcileOnce(rec)
		got := r.get(op)
		if got.State != ledger.Escalated || r.sim.Requests() != 0 {
			t.Fatalf("state %s %q after %d requests", got.State, got.Reason, r.sim.Requests())
		}
	})
}
