package ledgertest

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"settle/ledger"
)

// refBind is a contract's Bind and Rebind in miniature: it writes the
// remote key into "ref", over whatever is there (the rebinder a supersede
// approval needs; its own Bind refusing a clash is the target package's
// business).
func refBind(payload []byte, remoteKey, _ string) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal(payload, &m); err != nil {
		return nil, err
	}
	m["ref"] = remoteKey
	return json.Marshal(m)
}

// testSupersede covers the supersede proposal: approved, the operation is
// FAILED_TERMINAL and, in the same transaction, exactly one successor
// intent is created under a new key with the payload rebound to it; each
// names the other.
func testSupersede(t *testing.T, h Harness) {
	f := setup(t, h)
	rs := f.store.(ledger.ResolutionStore)
	f.withCallback("acme")
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
		return f.record(held, ledger.InFlight, ledger.Escalated)
	}
	propose := func(op ledger.Operation) ledger.Resolution {
		r, err := rs.Propose(alice, ledger.Resolution{Tenant: op.Tenant, OperationID: op.ID,
			Kind: ledger.KindSupersede, To: ledger.KindTo(ledger.KindSupersede),
			Reason: "the target's lookup finds nothing under our reference"})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}

	t.Run("Rules", func(t *testing.T) {
		op := escalated()
		_, err := rs.Propose(alice, ledger.Resolution{Tenant: "acme", OperationID: op.ID,
			Kind: ledger.KindSupersede, To: ledger.FailedTerminal, RemoteRef: "ch_1", Reason: "x"})
		wantCode(t, err, ledger.EInvalid)
		r := propose(op)
		// Approve without the binding, or the binding for another kind: refused, nothing written.
		_, err = rs.Approve(bob, "acme", r.ID)
		wantCode(t, err, ledger.EInvalid)
		_, _, err = rs.ApproveSupersede(alice, "acme", r.ID, refBind)
		wantCode(t, err, ledger.EForbidden)
		if got := f.get(op); got.State != ledger.Escalated {
			t.Fatalf("a refused approval moved the operation to %s", got.State)
		}
		if err := rs.Reject(bob, "acme", r.ID, "not yet"); err != nil {
			t.Fatal(err)
		}
		other := escalated()
		ro, err := rs.Propose(alice, ledger.Resolution{Tenant: "acme", OperationID: other.ID,
			Kind: ledger.KindConfirmNotApplied, To: ledger.FailedTerminal, Reason: "x"})
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = rs.ApproveSupersede(bob, "acme", ro.ID, refBind)
		wantCode(t, err, ledger.EInvalid)
	})

	t.Run("Approved", func(t *testing.T) {
		op := escalated()
		r := propose(op)
		old, next, err := rs.ApproveSupersede(bob, "acme", r.ID, refBind)
		if err != nil {
			t.Fatal(err)
		}
		if old.ID != op.ID || old.State != ledger.FailedTerminal {
			t.Fatalf("superseded: %+v", old)
		}
		if next.State != ledger.Prepared || next.ID == op.ID || next.RemoteKey == op.RemoteKey ||
			next.IntentRef != ledger.SupersedeIntent(op.IntentRef) || next.IntentRef != op.IntentRef+"~s1" ||
			next.Tenant != op.Tenant || next.Type != op.Type || next.Target != op.Target || next.RetryWindow != op.RetryWindow {
			t.Fatalf("successor: %+v of %+v", next, op)
		}
		if bytes.Equal(next.PayloadHash, op.PayloadHash) || !strings.Contains(string(next.Payload), next.RemoteKey) ||
			strings.Contains(string(next.Payload), op.RemoteKey) {
			t.Fatalf("payload not rebound: %s (old key %s)", next.Payload, op.RemoteKey)
		}
		byIntent, err := f.store.GetByIntent(f.ctx, "acme", op.Type, next.IntentRef)
		if err != nil || byIntent.ID != next.ID {
			t.Fatalf("successor by intent: %+v %v", byIntent, err)
		}
		evs, err := f.store.Events(f.ctx, "acme", op.ID)
		if err != nil || len(evs) == 0 {
			t.Fatal(err)
		}
		last := evs[len(evs)-1]
		var ev map[string]any
		if err := json.Unmarshal(last.Evidence, &ev); err != nil || last.To != ledger.FailedTerminal ||
			ev["superseded_by"] != next.ID || ev["kind"] != string(ledger.KindSupersede) || ev["approved_by"] != "oidc:bob-sub" {
			t.Fatalf("the approval's event: %+v %s %v", last, last.Evidence, err)
		}
		acts, err := f.store.(ledger.ActionStore).Actions(f.ctx, ledger.ActionFilter{Tenant: "acme", OperationID: next.ID})
		if err != nil || len(acts) != 1 || acts[0].Reason != "supersedes "+op.ID || acts[0].Kind != ledger.ActionApprove {
			t.Fatalf("the successor's record: %+v %v", acts, err)
		}
		final := 0
		for _, n := range f.notifications(old) {
			if n.State == ledger.FailedTerminal {
				final++
			}
		}
		if final != 1 {
			t.Fatalf("callbacks for the final transition: %d, want 1", final)
		}
		// A retried approval finds no open proposal and creates nothing.
		_, _, err = rs.ApproveSupersede(bob, "acme", r.ID, refBind)
		wantCode(t, err, ledger.ENotFound)
		_, err = f.store.GetByIntent(f.ctx, "acme", op.Type, ledger.SupersedeIntent(next.IntentRef))
		wantCode(t, err, ledger.ENotFound)
	})

	t.Run("SuccessorIntentTaken", func(t *testing.T) {
		op := escalated()
		taken := f.newOp("acme")
		taken.IntentRef = ledger.SupersedeIntent(op.IntentRef)
		if _, _, err := f.store.Create(f.ctx, taken); err != nil {
			t.Fatal(err)
		}
		r := propose(op)
		_, _, err := rs.ApproveSupersede(bob, "acme", r.ID, refBind)
		if code := ledger.ErrorCode(err); code != ledger.EConflict && code != ledger.EPayloadConflict {
			t.Fatalf("approve over a taken intent: %v", err)
		}
		// All or nothing: the operation and the proposal are as they were.
		if got := f.get(op); got.State != ledger.Escalated || got.Fence != op.Fence {
			t.Fatalf("a failed approval moved the operation: %+v", got)
		}
		if open, _ := rs.Resolutions(f.ctx, "acme", true); !hasResolution(open, r.ID) {
			t.Fatal("a failed approval closed the proposal")
		}
	})
}
