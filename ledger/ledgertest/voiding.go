package ledgertest

import (
	"context"
	"strings"
	"testing"
	"time"

	"settle/ledger"
)

// ProposalVoided checks that an approval re-checks the operation: a
// proposal whose operation moved (move changes its fence behind the
// ledger's back, as no ledger path moves an ESCALATED operation with a
// proposal open) is closed as stale, the operation is left alone, the
// approver is told EStaleFence, and the void approval is recorded. Each
// store's own tests supply move, with its raw SQL.
func ProposalVoided(t *testing.T, s ledger.Store, move func(op ledger.Operation)) {
	t.Helper()
	ctx := ledger.NewContextWithActor(context.Background(), testActor)
	rs := s.(ledger.ResolutionStore)
	op, _, err := s.Create(ctx, ledger.NewOperation{Tenant: "acme", Type: "charge", IntentRef: "void-1",
		Target: "payments", Payload: []byte(`{"amount":1}`), RetryWindow: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	held, err := s.Claim(ctx, "acme", op.ID, op.PayloadHash, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Record(ctx, outcome(held, ledger.InFlight, ledger.Escalated)); err != nil {
		t.Fatal(err)
	}
	as := func(sub string) context.Context {
		return ledger.NewContextWithActor(context.Background(), ledger.Actor{Subject: sub, Name: sub, Role: "owner"})
	}
	r, err := rs.Propose(as("oidc:alice"), ledger.Resolution{Tenant: "acme", OperationID: op.ID,
		Kind: ledger.KindConfirmNotApplied, To: ledger.FailedTerminal, Reason: "not at the target"})
	if err != nil {
		t.Fatal(err)
	}
	move(op)
	moved, err := s.Get(ctx, "acme", op.ID)
	if err != nil || moved.Fence == r.Fence {
		t.Fatalf("move did not change the fence: %+v %v", moved, err)
	}
	_, err = rs.Approve(as("oidc:bob"), "acme", r.ID)
	wantCode(t, err, ledger.EStaleFence)
	after, _ := s.Get(ctx, "acme", op.ID)
	if after.State != ledger.Escalated || after.Fence != moved.Fence {
		t.Fatalf("a void approval changed the operation: %s at %d", after.State, after.Fence)
	}
	list, _ := rs.Resolutions(ctx, "acme", false)
	if len(list) != 1 || list[0].Decision != ledger.DecisionStale || list[0].DecidedBy != "oidc:bob" {
		t.Fatalf("the proposal was not closed as stale: %+v", list)
	}
	if open, _ := rs.OpenResolutions(ctx, []string{"acme"}, false); len(open) != 0 {
		t.Fatalf("a void proposal is still open: %+v", open)
	}
	acts, _ := s.(ledger.ActionStore).Actions(ctx, ledger.ActionFilter{Tenant: "acme", OperationID: op.ID})
	if len(acts) != 2 || acts[0].Kind != ledger.ActionApprove || !strings.HasPrefix(acts[0].Reason, "stale:") {
		t.Fatalf("the void approval was not recorded: %+v", acts)
	}
	// Nobody approves it a second time.
	_, err = rs.Approve(as("oidc:carol"), "acme", r.ID)
	wantCode(t, err, ledger.ENotFound)

	// A void supersede creates no successor.
	sup, _, err := s.Create(ctx, ledger.NewOperation{Tenant: "acme", Type: "charge", IntentRef: "void-2",
		Target: "payments", Payload: []byte(`{"amount":2}`), RetryWindow: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if held, err = s.Claim(ctx, "acme", sup.ID, sup.PayloadHash, time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Record(ctx, outcome(held, ledger.InFlight, ledger.Escalated)); err != nil {
		t.Fatal(err)
	}
	rs2, err := rs.Propose(as("oidc:alice"), ledger.Resolution{Tenant: "acme", OperationID: sup.ID,
		Kind: ledger.KindSupersede, To: ledger.FailedTerminal, Reason: "absent at the target"})
	if err != nil {
		t.Fatal(err)
	}
	move(sup)
	_, _, err = rs.ApproveSupersede(as("oidc:bob"), "acme", rs2.ID, refBind)
	wantCode(t, err, ledger.EStaleFence)
	if after, _ := s.Get(ctx, "acme", sup.ID); after.State != ledger.Escalated {
		t.Fatalf("a void supersede moved the operation to %s", after.State)
	}
	_, err = s.GetByIntent(ctx, "acme", "charge", ledger.SupersedeIntent("void-2"))
	wantCode(t, err, ledger.ENotFound)
}
