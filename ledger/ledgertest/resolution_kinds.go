package ledgertest

import (
	"testing"
	"time"

	"settle/ledger"
)

// testResolutionKinds covers the kinds of proposal of the escalation
// queue: a replay proposal's approval hands the operation back to the
// reconciler once, and the proposals view lists open proposals across
// tenants.
func testResolutionKinds(t *testing.T, h Harness) {
	f := setup(t, h)
	rs := f.store.(ledger.ResolutionStore)
	f.withCallback("acme")
	alice := f.as("oidc:alice-sub", "Alice", "owner")
	bob := f.as("oidc:bob-sub", "Bob", "owner")
	propose := func(op ledger.Operation, k ledger.ResolutionKind, ref string) (ledger.Resolution, error) {
		return rs.Propose(alice, ledger.Resolution{Tenant: op.Tenant, OperationID: op.ID, Kind: k,
			To: ledger.KindTo(k), RemoteRef: ref, Reason: "the target's dashboard shows nothing"})
	}

	t.Run("KindRules", func(t *testing.T) {
		op := f.inState("acme", ledger.Escalated)
		_, err := rs.Propose(alice, ledger.Resolution{Tenant: "acme", OperationID: op.ID,
			Kind: ledger.KindReplay, To: ledger.Succeeded, Reason: "x"})
		wantCode(t, err, ledger.EInvalid)
		_, err = propose(op, ledger.KindReplay, "ch_1")
		wantCode(t, err, ledger.EInvalid)
		_, err = propose(op, "resend", "")
		wantCode(t, err, ledger.EInvalid)
		// The CLI names only the end state: the kind follows from it.
		r, err := rs.Propose(alice, ledger.Resolution{Tenant: "acme", OperationID: op.ID,
			To: ledger.FailedTerminal, Reason: "x"})
		if err != nil || r.Kind != ledger.KindConfirmNotApplied {
			t.Fatalf("kind from the end state: %+v %v", r, err)
		}
	})

	// Kinds are checked in Go, not by a list in the schema (migration
	// 00039): every kind the ledger knows is stored and read back as
	// written, and an empty one is refused by the column too.
	t.Run("EveryKindStored", func(t *testing.T) {
		for _, k := range ledger.ResolutionKinds {
			op := f.inState("acme", ledger.Escalated)
			ref := ""
			if ledger.KindTo(k) == ledger.Succeeded {
				ref = "ch_every_kind"
			}
			r, err := propose(op, k, ref)
			if err != nil {
				t.Fatalf("propose %s: %v", k, err)
			}
			got, err := rs.Resolutions(f.ctx, "acme", true)
			if err != nil || !hasResolution(got, r.ID) {
				t.Fatalf("the %s proposal is not listed: %v", k, err)
			}
			for _, g := range got {
				if g.ID == r.ID && (g.Kind != k || g.To != ledger.KindTo(k)) {
					t.Fatalf("stored %s → %s, read %s → %s", k, ledger.KindTo(k), g.Kind, g.To)
				}
			}
			if err := rs.Reject(bob, "acme", r.ID, "every kind is stored"); err != nil {
				t.Fatalf("reject %s: %v", k, err)
			}
		}
	})

	t.Run("ReplayWindowClosed", func(t *testing.T) {
		op := f.inState("acme", ledger.Escalated)
		f.clk.Advance(25 * time.Hour) // the fixture's window is 24h from the claim
		_, err := propose(op, ledger.KindReplay, "")
		wantCode(t, err, ledger.EInvalid)
	})

	t.Run("ReplayApproved", func(t *testing.T) {
		op := f.inState("acme", ledger.Escalated)
		r, err := propose(op, ledger.KindReplay, "")
		if err != nil || r.Kind != ledger.KindReplay || r.To != ledger.Unknown {
			t.Fatalf("propose replay: %+v %v", r, err)
		}
		got, err := rs.Approve(bob, "acme", r.ID)
		if err != nil || got.State != ledger.Unknown || got.Reason != ledger.ReasonReplayAuthorised ||
			got.NextReconcileAt == nil || got.NextReconcileAt.After(f.clk.Now()) {
			t.Fatalf("approved replay: %+v %v", got, err)
		}
		for _, n := range f.notifications(got) {
			if n.State == ledger.Unknown {
				t.Fatalf("a replay approval is no final transition, yet a callback was queued: %+v", n)
			}
		}
		// The reconciler leases it at once; its record replaces the marker.
		leased := f.lease(got)
		if leased.Reason != ledger.ReasonReplayAuthorised {
			t.Fatalf("the lease lost the marker: %q", leased.Reason)
		}
		again := f.record(leased, ledger.Unknown, ledger.Escalated)
		if again.Reason == ledger.ReasonReplayAuthorised {
			t.Fatal("the marker survived the reconciler's record")
		}
		// Re-escalated, it may be proposed again.
		if _, err := propose(again, ledger.KindConfirmNotApplied, ""); err != nil {
			t.Fatalf("propose after re-escalation: %v", err)
		}
	})

	t.Run("OpenAcrossTenants", func(t *testing.T) {
		a, g := f.inState("acme", ledger.Escalated), f.inState("globex", ledger.Escalated)
		ra, err := propose(a, ledger.KindConfirmSucceeded, "ch_a")
		if err != nil {
			t.Fatal(err)
		}
		rg, err := propose(g, ledger.KindConfirmNotApplied, "")
		if err != nil {
			t.Fatal(err)
		}
		only, err := rs.OpenResolutions(f.ctx, []string{"globex"}, false)
		if err != nil || len(only) != 1 || only[0].ID != rg.ID || only[0].Kind != ledger.KindConfirmNotApplied {
			t.Fatalf("globex's open proposals: %+v %v", only, err)
		}
		none, err := rs.OpenResolutions(f.ctx, nil, false)
		if err != nil || len(none) != 0 {
			t.Fatalf("no tenants: %+v %v", none, err)
		}
		all, err := rs.OpenResolutions(f.ctx, nil, true)
		if err != nil || !hasResolution(all, ra.ID) || !hasResolution(all, rg.ID) {
			t.Fatalf("every tenant: %+v %v", all, err)
		}
		if err := rs.Reject(bob, "acme", ra.ID, "not yet"); err != nil {
			t.Fatal(err)
		}
		if all, _ := rs.OpenResolutions(f.ctx, []string{"acme"}, false); hasResolution(all, ra.ID) {
			t.Fatal("a rejected proposal is still listed as open")
		}
	})
}

func hasResolution(rs []ledger.Resolution, id int64) bool {
	for _, r := range rs {
		if r.ID == id {
			return true
		}
	}
	return false
}
