package ledgertest

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"settle/ledger"
)

func testResolutions(t *testing.T, h Harness) {
	f := setup(t, h)
	rs, ok := f.store.(ledger.ResolutionStore)
	if !ok {
		t.Fatal("store does not implement ledger.ResolutionStore")
	}
	cbs, _ := f.store.(ledger.CallbackStore)
	if cbs != nil {
		if err := cbs.SetCallback(f.ctx, "acme", "https://acme.example/cb", []byte("0123456789abcdef0123456789abcdef"), f.clk.Now()); err != nil {
			t.Fatal(err)
		}
	}
	alice := f.as("oidc:alice-sub", "Alice", "owner")
	bob := f.as("oidc:bob-sub", "Bob", "owner")
	carol := f.as("cli:carol", "carol", "owner")
	op := f.inState("acme", ledger.Escalated)
	propose := func(ctx context.Context, op ledger.Operation, to ledger.State, ref string) (ledger.Resolution, error) {
		return rs.Propose(ctx, ledger.Resolution{Tenant: op.Tenant, OperationID: op.ID, To: to,
			RemoteRef: ref, Reason: "provider support confirmed the charge by phone"})
	}

	t.Run("ProposeRules", func(t *testing.T) {
		_, err := propose(alice, f.create("acme"), ledger.Succeeded, "ch_1")
		wantCode(t, err, ledger.EInvalidTransition)
		_, err = propose(alice, op, ledger.Succeeded, "")
		wantCode(t, err, ledger.EInvalid)
		_, err = propose(alice, op, ledger.Unknown, "")
		wantCode(t, err, ledger.EInvalid)
		_, err = propose(context.Background(), op, ledger.FailedTerminal, "")
		wantCode(t, err, ledger.EInvalid)
		_, err = rs.Propose(alice, ledger.Resolution{Tenant: "globex", OperationID: op.ID, To: ledger.FailedTerminal,
			Reason: "x"})
		wantCode(t, err, ledger.ENotFound)
		if open, _ := rs.Resolutions(f.ctx, "acme", true); len(open) != 0 {
			t.Fatalf("a refused proposal was stored: %+v", open)
		}
	})

	t.Run("TwoPeople", func(t *testing.T) {
		r, err := propose(alice, op, ledger.Succeeded, "ch_9")
		if err != nil || r.ID == 0 || r.Fence != op.Fence || r.Decision != "" ||
			r.ProposedBy != "oidc:alice-sub" || r.ProposedByName != "Alice" {
			t.Fatalf("propose: %+v %v", r, err)
		}
		_, err = propose(carol, op, ledger.FailedTerminal, "")
		wantCode(t, err, ledger.EConflict)
		_, err = rs.Approve(alice, "acme", r.ID)
		wantCode(t, err, ledger.EForbidden)
		// The same subject under another display name is still the proposer.
		_, err = rs.Approve(f.as("oidc:alice-sub", "A. Lovelace", "admin"), "acme", r.ID)
		wantCode(t, err, ledger.EForbidden)
		_, err = rs.Approve(context.Background(), "acme", r.ID)
		wantCode(t, err, ledger.EInvalid)
		_, err = rs.Approve(bob, "globex", r.ID)
		wantCode(t, err, ledger.ENotFound)
		sameOp(t, op, f.get(op))

		got, err := rs.Approve(bob, "acme", r.ID)
		if err != nil || got.State != ledger.Succeeded || got.RemoteRef != "ch_9" {
			t.Fatalf("approve: %+v %v", got, err)
		}
		evs, _ := f.store.Events(f.ctx, op.Tenant, op.ID)
		last := evs[len(evs)-1]
		var ev map[string]any
		_ = json.Unmarshal(last.Evidence, &ev)
		if last.From != ledger.Escalated || last.To != ledger.Succeeded || last.Actor != "oidc:bob-sub" ||
			ev["proposed_by"] != "oidc:alice-sub" || ev["proposed_by_name"] != "Alice" ||
			ev["approved_by"] != "oidc:bob-sub" || ev["approved_by_name"] != "Bob" || ev["role"] != "owner" ||
			ev["request_id"] != "req-oidc:bob-sub" || !strings.Contains(last.Reason, "by phone") {
			t.Fatalf("event %+v", last)
		}
		if _, err := rs.Approve(carol, "acme", r.ID); ledger.ErrorCode(err) != ledger.ENotFound {
			t.Fatalf("approved twice: %v", err)
		}
		list, _ := rs.Resolutions(f.ctx, "acme", false)
		if len(list) != 1 || list[0].Decision != ledger.DecisionApproved || list[0].DecidedBy != "oidc:bob-sub" ||
			list[0].DecidedByName != "Bob" || list[0].ProposedByName != "Alice" {
			t.Fatalf("resolutions %+v", list)
		}
		if cbs != nil {
			ns, err := cbs.Notifications(f.ctx, "acme", op.ID)
			if err != nil || len(ns) != 2 || ns[1].State != ledger.Succeeded {
				t.Fatalf("the approval queued no callback: %+v %v", ns, err)
			}
		}
		acts := actionsOf(t, f, "acme", op.ID)
		id := strconv.FormatInt(r.ID, 10)
		if len(acts) != 2 || acts[0].Kind != ledger.ActionApprove || acts[1].Kind != ledger.ActionPropose ||
			acts[0].Object != id || acts[1].Object != id || acts[0].Subject != "oidc:bob-sub" ||
			acts[1].Subject != "oidc:alice-sub" || acts[1].Reason != r.Reason {
			t.Fatalf("actions %+v", acts)
		}
	})

	t.Run("SameNameTwoPeople", func(t *testing.T) {
		other := f.inState("acme", ledger.Escalated)
		r, err := propose(f.as("oidc:sam-1", "Sam", "owner"), other, ledger.FailedTerminal, "")
		if err != nil {
			t.Fatal(err)
		}
		got, err := rs.Approve(f.as("oidc:sam-2", "Sam", "owner"), "acme", r.ID)
		if err != nil || got.State != ledger.FailedTerminal {
			t.Fatalf("two people who share a name: %+v %v", got, err)
		}
	})

	t.Run("Reject", func(t *testing.T) {
		other := f.inState("acme", ledger.Escalated)
		r, err := propose(alice, other, ledger.FailedTerminal, "")
		if err != nil {
			t.Fatal(err)
		}
		wantCode(t, rs.Reject(bob, "acme", r.ID, ""), ledger.EInvalid)
		wantCode(t, rs.Reject(context.Background(), "acme", r.ID, "no actor"), ledger.EInvalid)
		wantCode(t, rs.Reject(bob, "globex", r.ID, "another tenant"), ledger.ENotFound)
		if err := rs.Reject(bob, "acme", r.ID, "the provider shows the charge; not a failure"); err != nil {
			t.Fatal(err)
		}
		sameOp(t, other, f.get(other))
		open, _ := rs.Resolutions(f.ctx, "acme", true)
		if len(open) != 0 {
			t.Fatalf("open after reject: %+v", open)
		}
		acts := actionsOf(t, f, "acme", other.ID)
		if len(acts) != 2 || acts[0].Kind != ledger.ActionReject || acts[0].Subject != "oidc:bob-sub" ||
			acts[0].Reason != "the provider shows the charge; not a failure" {
			t.Fatalf("actions %+v", acts)
		}
		if _, err := propose(carol, other, ledger.Succeeded, "ch_2"); err != nil {
			t.Fatalf("a new proposal after a rejection: %v", err)
		}
	})
}

// actionsOf returns the recorded actions of one operation, newest first.
func actionsOf(t *testing.T, f *fixture, tenant, opID string) []ledger.Action {
	t.Helper()
	as, ok := f.store.(ledger.ActionStore)
	if !ok {
		t.Fatal("store does not implement ledger.ActionStore")
	}
	acts, err := as.Actions(f.ctx, ledger.ActionFilter{Tenant: tenant, OperationID: opID})
	if err != nil {
		t.Fatal(err)
	}
	return acts
}
