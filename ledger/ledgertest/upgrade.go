package ledgertest

import (
	"context"
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"settle/ledger"
)

// UpgradedStore is every store interface an upgraded database serves.
type UpgradedStore interface {
	ledger.Store
	ledger.InboxStore
	ledger.AuditStore
	ledger.CallbackStore
	ledger.ResolutionStore
	ledger.FigureStore
	ledger.TokenStore
	ledger.ActionStore
	ledger.TenantParamStore
}

// OldOperation is what an adapter's migration test wrote, with an older
// schema, for one operation of tenant "acme" (intent "order-N"), and
// expects to read back after the upgrade.
type OldOperation struct {
	N                     int
	ID, RemoteKey, Reason string
	State                 ledger.State
	Fence                 int64
	Payload               []byte
	CreatedAt, SentAt     time.Time
	Events                int // events written for it
}

// CheckUpgraded reads rows an older schema (version) held through the
// upgraded store s, then runs every loop's work on them, so that a
// migration that loses or garbles old data fails on either store. old must
// cover the states PREPARED, IN_FLIGHT, UNKNOWN, SUCCEEDED (remote ref
// "ch_4"), FAILED_TERMINAL and ESCALATED, in that order and oldest first.
func CheckUpgraded(ctx context.Context, t *testing.T, s UpgradedStore, old []OldOperation, version int64, now time.Time) {
	t.Helper()
	t.Helper()
	for _, o := range old {
		op, err := s.Get(ctx, "acme", o.ID)
		if err != nil {
			t.Fatalf("op %d: %v", o.N, err)
		}
		if op.State != o.State || op.Fence != o.Fence || op.IntentRef != fmt.Sprintf("order-%d", o.N) ||
			string(op.Payload) != string(o.Payload) || op.RemoteKey != o.RemoteKey || op.Reason != o.Reason ||
			!op.CreatedAt.Equal(o.CreatedAt) {
			t.Errorf("op %d after the upgrade: %+v", o.N, op)
		}
		// last_sent_at (00003) is NULL for rows written before it existed.
		switch {
		case version < 3 || o.State == ledger.Prepared:
			if op.LastSentAt != nil {
				t.Errorf("op %d: last sent %v, want none", o.N, op.LastSentAt)
			}
		case op.LastSentAt == nil || !op.LastSentAt.Equal(o.SentAt):
			t.Errorf("op %d: last sent %v, want %v", o.N, op.LastSentAt, o.SentAt)
		}
		evs, err := s.Events(ctx, "acme", o.ID)
		if err != nil || len(evs) != o.Events {
			t.Errorf("op %d: %d events, %v; want %d", o.N, len(evs), err, o.Events)
		}
	}
	page, err := s.List(ctx, ledger.ListFilter{Tenant: "acme"})
	if err != nil || len(page.Operations) != len(old) || page.Operations[0].ID != old[len(old)-1].ID {
		t.Fatalf("list: %d operations, %v", len(page.Operations), err)
	}
	if ops, err := s.Find(ctx, "acme", "ch_4"); err != nil || len(ops) != 1 || ops[0].ID != old[3].ID {
		t.Errorf("find by remote reference: %v, %v", ops, err)
	}
	if n, err := s.PayloadConflicts(ctx, "acme", ledger.Since(now.Add(-time.Hour))); err != nil || n != 1 {
		t.Errorf("payload conflicts = %d, %v", n, err)
	}

	// The API: the same intent is the old operation; a new one is created.
	if op, created, err := s.Create(ctx, ledger.NewOperation{Tenant: "acme", Type: "charge", IntentRef: "order-1",
		Target: "payments", Payload: old[0].Payload}); err != nil || created || op.ID != old[0].ID {
		t.Fatalf("create the old intent again: %s created=%v, %v", op.ID, created, err)
	}
	if _, _, err := s.Create(ctx, ledger.NewOperation{Tenant: "acme", Type: "charge", IntentRef: "order-7",
		Target: "payments", Payload: []byte(`{"amount":7}`)}); err != nil {
		t.Fatal(err)
	}

	// The executor claims the old PREPARED operation (its stored payload
	// still matches its hash) and the new one, and records them.
	claimed, err := s.ClaimBatch(ctx, 10, time.Minute)
	if err != nil || len(claimed) != 2 || claimed[0].ID != old[0].ID {
		t.Fatalf("claimed %d, %v", len(claimed), err)
	}
	for _, op := range claimed {
		if _, err := s.Record(ctx, ledger.Outcome{Tenant: op.Tenant, OperationID: op.ID, Fence: op.Fence,
			From: ledger.InFlight, To: ledger.Succeeded, RemoteRef: "ch_new_" + op.IntentRef,
			Actor: ledger.ActorExecutor}); err != nil {
			t.Fatal(err)
		}
	}
	// The sweeper and the reconciler take over the old IN_FLIGHT and UNKNOWN.
	if n, err := s.SweepExpired(ctx); err != nil || n != 1 {
		t.Fatalf("swept %d, %v", n, err)
	}
	leased, err := s.LeaseUnknown(ctx, 10, time.Minute)
	if err != nil || len(leased) != 2 {
		t.Fatalf("leased %d, %v", len(leased), err)
	}
	for _, op := range leased {
		if _, err := s.Record(ctx, ledger.Outcome{Tenant: op.Tenant, OperationID: op.ID, Fence: op.Fence,
			From: ledger.Unknown, To: ledger.FailedTerminal, Reason: "not found at the target",
			Actor: ledger.ActorReconciler}); err != nil {
			t.Fatal(err)
		}
	}
	// The manual resolution of the old ESCALATED operation: the old open
	// proposal, or one made now when the old version had none.
	var proposal ledger.Resolution
	if version >= 7 {
		open, err := s.Resolutions(ctx, "acme", true)
		if err != nil || len(open) != 1 {
			t.Fatalf("open proposals: %d, %v", len(open), err)
		}
		proposal = open[0]
		// Before 13 only the CLI proposed, with a free-text name: it is
		// now the CLI's subject, so the two-person rule still holds.
		if proposal.ProposedBy != "cli:alice" || proposal.ProposedByName != "alice" {
			t.Errorf("old proposer: %q (%q), want cli:alice (alice)", proposal.ProposedBy, proposal.ProposedByName)
		}
		if _, err := s.Approve(as(ctx, "cli:alice", "alice"), "acme", proposal.ID); ledger.ErrorCode(err) != ledger.EForbidden {
			t.Errorf("the old proposer approved their own proposal: %v", err)
		}
	} else if proposal, err = s.Propose(as(ctx, "cli:alice", "alice"), ledger.Resolution{Tenant: "acme", OperationID: old[5].ID,
		To: ledger.Succeeded, RemoteRef: "ch_6", Reason: "found in the dashboard"}); err != nil {
		t.Fatal(err)
	}
	if op, err := s.Approve(as(ctx, "cli:bob", "bob"), "acme", proposal.ID); err != nil || op.State != ledger.Succeeded {
		t.Fatalf("approve: %v", err)
	}
	if acts, err := s.Actions(ctx, ledger.ActionFilter{Tenant: "acme", OperationID: old[5].ID}); err != nil ||
		len(acts) == 0 || acts[0].Kind != ledger.ActionApprove || acts[0].Subject != "cli:bob" {
		t.Errorf("actions after the upgrade: %+v, %v", acts, err)
	}
	ts, err := s.Transitions(ctx, "acme", ledger.Since(now.Add(-24*time.Hour)))
	if err != nil || len(ts) < len(old) {
		t.Errorf("transitions: %d, %v", len(ts), err)
	}

	// Tables an older version did not have start empty and work.
	tokens, err := s.ListTokens(ctx, "acme")
	if want := map[bool]int{true: 1, false: 0}[version >= 2]; err != nil || len(tokens) != want {
		t.Errorf("tokens: %d, %v; want %d", len(tokens), err, want)
	}
	h := sha256.Sum256([]byte("stl_old"))
	if _, err := s.TokenByHash(ctx, h[:]); version >= 2 && err != nil {
		t.Errorf("old token: %v", err)
	}
	deliveries, err := s.ClaimDeliveries(ctx, 10, time.Minute)
	if want := map[bool]int{true: 1, false: 0}[version >= 4]; err != nil || len(deliveries) != want {
		t.Errorf("deliveries: %d, %v; want %d", len(deliveries), err, want)
	}
	if _, dup, err := s.Receive(ctx, "payments", []byte(`{"id":"evt_0"}`)); err != nil || dup != (version >= 4) {
		t.Errorf("redelivery of an old delivery: duplicate=%v, %v", dup, err)
	}
	// The old item names no tenant: it is unattributed, shown only when asked.
	unattributed := ledger.QuarantineFilter{Open: true, AllTenants: true, Unattributed: true}
	if q, err := s.ListQuarantine(ctx, unattributed); err != nil || len(q) != map[bool]int{true: 1, false: 0}[version >= 4] {
		t.Errorf("quarantine: %d, %v", len(q), err)
	}
	if q, err := s.ListQuarantine(ctx, ledger.QuarantineFilter{Open: true, AllTenants: true}); err != nil || len(q) != 0 {
		t.Errorf("quarantine of every tenant: %d, %v; want the unattributed item left out", len(q), err)
	}
	// The old reviewed item that claims globex about acme's operation is
	// acme's, and its reviewer's free-text name became cli:NAME.
	if version >= 4 {
		acme, err := s.ListQuarantine(ctx, ledger.QuarantineFilter{Tenants: []string{"acme"}})
		if err != nil || len(acme) != 1 || acme[0].EventID != "evt_8" || acme[0].ResolvedBy != "cli:ops" || acme[0].ResolvedByName != "ops" {
			t.Errorf("acme's old quarantine: %+v, %v", acme, err)
		}
		if globex, err := s.ListQuarantine(ctx, ledger.QuarantineFilter{Tenants: []string{"globex"}}); err != nil || len(globex) != 0 {
			t.Errorf("globex sees acme's old item: %+v, %v", globex, err)
		}
	}
	if version >= 5 {
		if _, err := s.GetCallback(ctx, "acme"); err != nil {
			t.Errorf("old callback: %v", err)
		}
		// The old pending notification, and those of today's transitions
		// into final states (two claims, two reconciler verdicts, one
		// approval).
		ns, err := s.ClaimNotifications(ctx, 100, time.Minute)
		if err != nil || len(ns) != 6 {
			t.Errorf("notifications: %d, %v", len(ns), err)
		}
	}
	findings, err := s.Findings(ctx, "acme", now.Add(-24*time.Hour))
	if want := map[bool]int{true: 1, false: 0}[version >= 6]; err != nil || len(findings) != want {
		t.Errorf("findings: %d, %v; want %d", len(findings), err, want)
	}
	if _, err := s.AuditPosition(ctx, "payments"); (err == nil) != (version >= 6) {
		t.Errorf("audit position: %v", err)
	}
	// No old version had tenant parameters (00020): none, and a first
	// value may be set.
	if params, err := s.TenantParams(ctx, "acme"); err != nil || len(params) != 0 {
		t.Errorf("tenant params: %v, %v", params, err)
	}
	if err := s.SetTenantParams(as(ctx, "cli:alice", "alice"), "acme", map[string]string{"account": "acct_1"}, nil, false); err != nil {
		t.Errorf("set a tenant parameter: %v", err)
	}
}

// as returns ctx acting as the CLI operator subject, named name, as owner.
func as(ctx context.Context, subject, name string) context.Context {
	return ledger.NewContextWithActor(ctx, ledger.Actor{Subject: subject, Name: name, Role: "owner"})
}
