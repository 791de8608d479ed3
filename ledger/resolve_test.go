package ledger_test

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"settle/ledger"
)

// fakeTx is a ResolutionTx over one proposal and one operation, recording
// what the rules wrote.
type fakeTx struct {
	op        ledger.Operation
	proposal  ledger.Resolution
	open      bool
	unchanged bool // ApplyIfUnchanged finds the operation as proposed
	applied   []ledger.Outcome
	decided   []ledger.Resolution
	inserted  []ledger.Resolution
	actions   []ledger.Action
}

func (f *fakeTx) Operation(_ context.Context, tenant, id string) (ledger.Operation, error) {
	if tenant != f.op.Tenant || id != f.op.ID {
		return ledger.Operation{}, ledger.Errorf(ledger.ENotFound, "operation not found")
	}
	return f.op, nil
}

func (f *fakeTx) InsertProposal(_ context.Context, r ledger.Resolution) (ledger.Resolution, error) {
	r.ID = 7
	f.inserted = append(f.inserted, r)
	return r, nil
}

func (f *fakeTx) LockOpenProposal(_ context.Context, tenant string, id int64) (ledger.Resolution, bool, error) {
	if !f.open || tenant != f.proposal.Tenant || id != f.proposal.ID {
		return ledger.Resolution{}, false, nil
	}
	return f.proposal, true, nil
}

func (f *fakeTx) ApplyIfUnchanged(_ context.Context, o ledger.Outcome, _ time.Time) (ledger.Operation, bool, error) {
	if !f.unchanged {
		return ledger.Operation{}, false, nil
	}
	f.applied = append(f.applied, o)
	op := f.op
	op.State = o.To
	return op, true, nil
}

func (f *fakeTx) Decide(_ context.Context, r ledger.Resolution) error {
	f.decided = append(f.decided, r)
	return nil
}

func (f *fakeTx) RecordAction(_ context.Context, a ledger.Action) error {
	f.actions = append(f.actions, a)
	return nil
}

// fakeTx creates nothing: the stores' conformance suite covers supersede.
func (f *fakeTx) InsertIfNew(context.Context, ledger.Operation) (ledger.Operation, bool, error) {
	return ledger.Operation{}, false, ledger.Errorf(ledger.EInternal, "fakeTx creates nothing")
}

func (f *fakeTx) ByIntent(context.Context, string, string, string) (ledger.Operation, error) {
	return ledger.Operation{}, ledger.Errorf(ledger.ENotFound, "fakeTx creates nothing")
}

func (f *fakeTx) RecordConflict(context.Context, ledger.Operation, []byte, time.Time) error {
	return nil
}

func (f *fakeTx) wrote() bool {
	return len(f.applied)+len(f.decided)+len(f.inserted)+len(f.actions) > 0
}

func newFakeTx() *fakeTx {
	op := ledger.Operation{Tenant: "acme", ID: "op-1", State: ledger.Escalated, Fence: 4}
	return &fakeTx{op: op, open: true, unchanged: true, proposal: ledger.Resolution{ID: 7, Tenant: "acme",
		OperationID: "op-1", Fence: 4, To: ledger.FailedTerminal, Reason: "never reached the provider",
		ProposedBy: "oidc:ada", ProposedByName: "Ada"}}
}

func actor(subject, name string) context.Context {
	return ledger.NewContextWithActor(context.Background(), ledger.Actor{Subject: subject, Name: name, Role: "owner", RequestID: "r-1"})
}

var now = time.Date(2030, 5, 6, 7, 8, 9, 0, time.UTC)

func TestApproveIn(t *testing.T) {
	t.Parallel()
	t.Run("Approved", func(t *testing.T) {
		tx := newFakeTx()
		a, err := ledger.ApproveIn(actor("oidc:bob", "Bob"), tx, "acme", 7, nil, now)
		if err != nil || a.Stale || a.Err() != nil || a.Operation.State != ledger.FailedTerminal {
			t.Fatalf("approve: %+v, %v", a, err)
		}
		if len(tx.applied) != 1 || tx.applied[0].Actor != "oidc:bob" || tx.applied[0].Fence != 4 ||
			tx.applied[0].Evidence["approved_by_name"] != "Bob" || tx.applied[0].Evidence["request_id"] != "r-1" {
			t.Fatalf("applied %+v", tx.applied)
		}
		d := tx.decided[0]
		if d.Decision != ledger.DecisionApproved || d.DecidedBy != "oidc:bob" || d.DecidedByName != "Bob" || !d.DecidedAt.Equal(now) {
			t.Fatalf("decided %+v", d)
		}
		if len(tx.actions) != 1 || tx.actions[0].Kind != ledger.ActionApprove || tx.actions[0].Object != "7" ||
			tx.actions[0].OperationID != "op-1" || tx.actions[0].RequestID != "r-1" {
			t.Fatalf("actions %+v", tx.actions)
		}
	})
	t.Run("Stale", func(t *testing.T) {
		tx := newFakeTx()
		tx.unchanged = false
		a, err := ledger.ApproveIn(actor("oidc:bob", "Bob"), tx, "acme", 7, nil, now)
		if err != nil || !a.Stale || ledger.ErrorCode(a.Err()) != ledger.EStaleFence {
			t.Fatalf("stale approval: %+v, %v (must commit, then answer EStaleFence)", a, err)
		}
		if len(tx.decided) != 1 || tx.decided[0].Decision != ledger.DecisionStale || len(tx.actions) != 1 {
			t.Fatalf("a stale approval closes the proposal as stale and is recorded: %+v %+v", tx.decided, tx.actions)
		}
	})
	for name, c := range map[string]struct {
		ctx    context.Context
		tenant string
		want   ledger.Code
	}{
		"NoActor":            {context.Background(), "acme", ledger.EInvalid},
		"Proposer":           {actor("oidc:ada", "Ada"), "acme", ledger.EForbidden},
		"ProposerRenamed":    {actor("oidc:ada", "Ada Lovelace"), "acme", ledger.EForbidden},
		"OtherTenant":        {actor("oidc:bob", "Bob"), "globex", ledger.ENotFound},
		"InvalidActor":       {actor("ada", "Ada"), "acme", ledger.EInvalid},
		"SameNameOtherStill": {actor("oidc:ada2", "Ada"), "acme", ""},
	} {
		t.Run(name, func(t *testing.T) {
			tx := newFakeTx()
			_, err := ledger.ApproveIn(c.ctx, tx, c.tenant, 7, nil, now)
			if ledger.ErrorCode(err) != c.want {
				t.Fatalf("error %v, want %q", err, c.want)
			}
			if c.want != "" && tx.wrote() {
				t.Fatal("a refused approval wrote")
			}
		})
	}
}

func TestProposeIn(t *testing.T) {
	t.Parallel()
	tx := newFakeTx()
	r := ledger.Resolution{Tenant: "acme", OperationID: "op-1", To: ledger.FailedTerminal, Reason: "checked",
		ProposedBy: "cli:someone-else", ProposedByName: "forged"}
	if _, err := ledger.ProposeIn(context.Background(), tx, r, now); ledger.ErrorCode(err) != ledger.EInvalid || tx.wrote() {
		t.Fatalf("no actor: %v, wrote %v", err, tx.wrote())
	}
	got, err := ledger.ProposeIn(actor("oidc:ada", "Ada"), tx, r, now)
	if err != nil || got.ProposedBy != "oidc:ada" || got.ProposedByName != "Ada" || got.Fence != 4 || !got.ProposedAt.Equal(now) {
		t.Fatalf("propose: %+v, %v (the proposer is the context's actor, never the argument)", got, err)
	}
	if len(tx.actions) != 1 || tx.actions[0].Kind != ledger.ActionPropose || tx.actions[0].Reason != "checked" {
		t.Fatalf("actions %+v", tx.actions)
	}
}

func TestRejectIn(t *testing.T) {
	t.Parallel()
	tx := newFakeTx()
	if err := ledger.RejectIn(actor("oidc:bob", "Bob"), tx, "acme", 7, "", now); ledger.ErrorCode(err) != ledger.EInvalid || tx.wrote() {
		t.Fatalf("no reason: %v", err)
	}
	// The proposer may withdraw their own proposal: nothing is applied.
	if err := ledger.RejectIn(actor("oidc:ada", "Ada"), tx, "acme", 7, "wrong operation", now); err != nil {
		t.Fatal(err)
	}
	if len(tx.applied) != 0 || tx.decided[0].Decision != ledger.DecisionRejected || tx.decided[0].DecisionWhy != "wrong operation" ||
		tx.actions[0].Kind != ledger.ActionReject {
		t.Fatalf("decided %+v, actions %+v", tx.decided, tx.actions)
	}
}

func TestQuarantineItem_ScopeTenant(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		q    ledger.QuarantineItem
		want string
	}{
		{ledger.QuarantineItem{}, ""},
		{ledger.QuarantineItem{Tenant: "acme"}, "acme"},
		{ledger.QuarantineItem{OperationID: "op", OpTenant: "acme"}, "acme"},
		{ledger.QuarantineItem{Tenant: "globex", OperationID: "op", OpTenant: "acme"}, "acme"},
	} {
		if got := c.q.ScopeTenant(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.q, got, c.want)
		}
	}
}

func TestActionFilter_Validate(t *testing.T) {
	t.Parallel()
	for _, f := range []ledger.ActionFilter{{}, {Tenant: "Bad Tenant"}, {Tenant: "acme", Unattributed: true}} {
		if _, err := f.Validate(); ledger.ErrorCode(err) != ledger.EInvalid {
			t.Errorf("%+v: %v, want %s", f, err, ledger.EInvalid)
		}
	}
	for in, want := range map[int]int{0: ledger.MaxActions, -1: ledger.MaxActions, 10: 10, ledger.MaxActions + 1: ledger.MaxActions} {
		if f, err := (ledger.ActionFilter{Tenant: "acme", Limit: in}).Validate(); err != nil || f.Limit != want {
			t.Errorf("limit %d: %d, %v; want %d", in, f.Limit, err, want)
		}
	}
	if _, err := (ledger.ActionFilter{Unattributed: true}).Validate(); err != nil {
		t.Errorf("unattributed: %v", err)
	}
}

func TestNewAction(t *testing.T) {
	t.Parallel()
	if _, err := ledger.NewAction(context.Background(), ledger.ActionTokenCreate, "acme", "tok_1", "", "", now); ledger.ErrorCode(err) != ledger.EInvalid {
		t.Fatalf("no actor: %v", err)
	}
	long := strings.Repeat("é", 300) // 600 bytes
	a, err := ledger.NewAction(actor("oidc:ada", "Ada"), ledger.ActionReject, "acme", "7", "op-1", long, now)
	if err != nil || len(a.Reason) > 500 || !utf8.ValidString(a.Reason) || a.Subject != "oidc:ada" || a.Name != "Ada" ||
		a.Role != "owner" || a.RequestID != "r-1" || a.Kind != ledger.ActionReject || !a.At.Equal(now) {
		t.Fatalf("action %+v, %v", a, err)
	}
}

func TestSupersedeIntent(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"order-1": "order-1~s1", "order-1~s1": "order-1~s2", "order-1~s9": "order-1~s10",
		"a~s": "a~s~s1", "a~s01": "a~s01~s1", "a~sx": "a~sx~s1",
	} {
		if got := ledger.SupersedeIntent(in); got != want {
			t.Errorf("SupersedeIntent(%q) = %q, want %q", in, got, want)
		}
	}
}

// A manual resolution's object id follows the rule of a target's ids, so
// that the CLI's proposals (which reach the store without the console's
// check) cannot store what the stores or a screen cannot take.
func TestValidateProposalObjectID(t *testing.T) {
	op := ledger.Operation{State: ledger.Escalated}
	r := ledger.Resolution{Kind: ledger.KindConfirmSucceeded, To: ledger.Succeeded, RemoteRef: "ch_77",
		Reason: "seen in the dashboard", ProposedBy: "cli:olu"}
	if err := ledger.ValidateProposal(op, r, time.Now()); err != nil {
		t.Fatalf("plain id: %v", err)
	}
	for _, ref := range []string{"ch_\x00", "ch_\u202e1", strings.Repeat("x", 3000)} {
		r.RemoteRef = ref
		err := ledger.ValidateProposal(op, r, time.Now())
		if ledger.ErrorCode(err) != ledger.EInvalid || !strings.Contains(err.Error(), "remote_ref") {
			t.Errorf("id %.20q: %v, want EInvalid naming remote_ref", ref, err)
		}
	}
	r.RemoteRef, r.Reason = "ch_77", "seen\x00"
	if err := ledger.ValidateProposal(op, r, time.Now()); ledger.ErrorCode(err) != ledger.EInvalid {
		t.Errorf("NUL in the reason: %v", err)
	}
}
