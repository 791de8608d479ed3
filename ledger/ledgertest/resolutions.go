package ledgertest

import (
	"encoding/json"
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
	op := f.inState("acme", ledger.Escalated)
	propose := func(op ledger.Operation, to ledger.State, ref, by string) (ledger.Resolution, error) {
		return rs.Propose(f.ctx, ledger.Resolution{Tenant: op.Tenant, OperationID: op.ID, To: to,
			RemoteRef: ref, Reason: "provider support confirmed the charge by phone", ProposedBy: by})
	}

	t.Run("ProposeRules", func(t *testing.T) {
		_, err := propose(f.create("acme"), ledger.Succeeded, "ch_1", "alice")
		wantCode(t, err, ledger.EInvalidTransition)
		_, err = propose(op, ledger.Succeeded, "", "alice")
		wantCode(t, err, ledger.EInvalid)
		_, err = propose(op, ledger.Unknown, "", "alice")
		wantCode(t, err, ledger.EInvalid)
		_, err = propose(op, ledger.FailedTerminal, "", "")
		wantCode(t, err, ledger.EInvalid)
		_, err = rs.Propose(f.ctx, ledger.Resolution{Tenant: "globex", OperationID: op.ID, To: ledger.FailedTerminal,
			Reason: "x", ProposedBy: "mallory"})
		wantCode(t, err, ledger.ENotFound)
	})

	t.Run("TwoPeople", func(t *testing.T) {
		r, err := propose(op, ledger.Succeeded, "ch_9", "alice")
		if err != nil || r.ID == 0 || r.Fence != op.Fence || r.Decision != "" {
			t.Fatalf("propose: %+v %v", r, err)
		}
		_, err = propose(op, ledger.FailedTerminal, "", "carol")
		wantCode(t, err, ledger.EConflict)
		_, err = rs.Approve(f.ctx, "acme", r.ID, "alice")
		wantCode(t, err, ledger.EForbidden)
		_, err = rs.Approve(f.ctx, "globex", r.ID, "bob")
		wantCode(t, err, ledger.ENotFound)
		sameOp(t, op, f.get(op))

		got, err := rs.Approve(f.ctx, "acme", r.ID, "bob")
		if err != nil || got.State != ledger.Succeeded || got.RemoteRef != "ch_9" {
			t.Fatalf("approve: %+v %v", got, err)
		}
		evs, _ := f.store.Events(f.ctx, op.Tenant, op.ID)
		last := evs[len(evs)-1]
		var ev map[string]any
		_ = json.Unmarshal(last.Evidence, &ev)
		if last.From != ledger.Escalated || last.To != ledger.Succeeded || last.Actor != "person:bob" ||
			ev["proposed_by"] != "alice" || ev["approved_by"] != "bob" || !strings.Contains(last.Reason, "by phone") {
			t.Fatalf("event %+v", last)
		}
		if _, err := rs.Approve(f.ctx, "acme", r.ID, "carol"); ledger.ErrorCode(err) != ledger.ENotFound {
			t.Fatalf("approved twice: %v", err)
		}
		list, _ := rs.Resolutions(f.ctx, "acme", false)
		if len(list) != 1 || list[0].Decision != ledger.DecisionApproved || list[0].DecidedBy != "bob" {
			t.Fatalf("resolutions %+v", list)
		}
		if cbs != nil {
			ns, err := cbs.Notifications(f.ctx, "acme", op.ID)
			if err != nil || len(ns) != 2 || ns[1].State != ledger.Succeeded {
				t.Fatalf("the approval queued no callback: %+v %v", ns, err)
			}
		}
	})

	t.Run("Reject", func(t *testing.T) {
		other := f.inState("acme", ledger.Escalated)
		r, err := propose(other, ledger.FailedTerminal, "", "alice")
		if err != nil {
			t.Fatal(err)
		}
		wantCode(t, rs.Reject(f.ctx, "acme", r.ID, "bob", ""), ledger.EInvalid)
		if err := rs.Reject(f.ctx, "acme", r.ID, "bob", "the provider shows the charge; not a failure"); err != nil {
			t.Fatal(err)
		}
		sameOp(t, other, f.get(other))
		open, _ := rs.Resolutions(f.ctx, "acme", true)
		if len(open) != 0 {
			t.Fatalf("open after reject: %+v", open)
		}
		if _, err := propose(other, ledger.Succeeded, "ch_2", "carol"); err != nil {
			t.Fatalf("a new proposal after a rejection: %v", err)
		}
	})
}
