package ledger

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// resolutionOver is ResolutionTx over the Driver of one transaction; the
// transitions it writes are added to c.
type resolutionOver struct {
	createOver
}

var _ ResolutionTx = resolutionOver{}

func (t resolutionOver) Operation(ctx context.Context, tenant, id string) (Operation, error) {
	return New(t.d, nil).Get(ctx, tenant, id)
}

func (t resolutionOver) InsertProposal(ctx context.Context, r Resolution) (Resolution, error) {
	return t.d.ResolutionInsert(ctx, r)
}

func (t resolutionOver) LockOpenProposal(ctx context.Context, tenant string, id int64) (Resolution, bool, error) {
	return t.d.ResolutionLockOpen(ctx, tenant, id)
}

func (t resolutionOver) ApplyIfUnchanged(ctx context.Context, o Outcome, at time.Time) (Operation, bool, error) {
	evidence := []byte("{}")
	if len(o.Evidence) > 0 {
		var err error
		if evidence, err = json.Marshal(o.Evidence); err != nil {
			return Operation{}, false, err
		}
	}
	// An approved change is a recorded outcome from ESCALATED: the same
	// conditional write, its event and the tenant's callback; an applied
	// replay (to UNKNOWN) is due for the reconciler at once.
	ops, err := t.d.OperationRecord(ctx, RecordParams{Now: at, Rows: []RecordRow{{Tenant: o.Tenant,
		ID: o.OperationID, Fence: o.Fence, From: o.From, To: o.To, RemoteRef: o.RemoteRef,
		NextAt: nextReconcile(Outcome{To: o.To}, at), Reason: o.Reason, Actor: o.Actor, Evidence: evidence}}})
	if err != nil || len(ops) == 0 {
		return Operation{}, false, err
	}
	t.c.Add(ops[0], o.From)
	return ops[0], true, nil
}

func (t resolutionOver) Decide(ctx context.Context, r Resolution) error {
	return t.d.ResolutionDecide(ctx, r)
}

func (t resolutionOver) RecordAction(ctx context.Context, a Action) error {
	return t.d.ActionInsert(ctx, a)
}

// inResolution runs fn in one transaction and, once it has committed,
// tells the observer the transitions fn wrote.
func (l *Ledger) inResolution(ctx context.Context, fn func(tx ResolutionTx, now time.Time) error) error {
	var c Commit
	err := l.d.WithTx(ctx, func(tx Driver) error {
		c = Commit{}
		return fn(resolutionOver{createOver{tx, &c}}, l.clock())
	})
	if err == nil {
		c.Tell(ctx, l.observer)
	}
	return err
}

// Propose implements ResolutionStore with ProposeIn.
func (l *Ledger) Propose(ctx context.Context, r Resolution) (Resolution, error) {
	var got Resolution
	err := l.inResolution(ctx, func(tx ResolutionTx, now time.Time) error {
		var err error
		got, err = ProposeIn(ctx, tx, r, now)
		return err
	})
	if err != nil {
		return r, fmt.Errorf("propose: %w", err)
	}
	return got, nil
}

// Approve implements ResolutionStore with ApproveIn: the proposal is
// locked, the transition written with its event and its callback, and the
// decision and the action recorded, all in one transaction.
func (l *Ledger) Approve(ctx context.Context, tenant string, id int64) (Operation, error) {
	var a Approval
	err := l.inResolution(ctx, func(tx ResolutionTx, now time.Time) error {
		var err error
		a, err = ApproveIn(ctx, tx, tenant, id, nil, now)
		return err
	})
	if err != nil {
		return Operation{}, fmt.Errorf("approve: %w", err)
	}
	return a.Operation, a.Err()
}

// ApproveSupersede implements ResolutionStore with ApproveIn: the
// transition, the successor's creation, the decision and the actions
// commit together or not at all.
func (l *Ledger) ApproveSupersede(ctx context.Context, tenant string, id int64, rebind Rebinder) (superseded, successor Operation, err error) {
	var a Approval
	err = l.inResolution(ctx, func(tx ResolutionTx, now time.Time) error {
		var err error
		a, err = ApproveIn(ctx, tx, tenant, id, rebind, now)
		return err
	})
	if err != nil {
		return Operation{}, Operation{}, fmt.Errorf("approve supersede: %w", err)
	}
	return a.Operation, a.Successor, a.Err()
}

// Reject implements ResolutionStore with RejectIn.
func (l *Ledger) Reject(ctx context.Context, tenant string, id int64, why string) error {
	err := l.inResolution(ctx, func(tx ResolutionTx, now time.Time) error {
		return RejectIn(ctx, tx, tenant, id, why, now)
	})
	if err != nil {
		return fmt.Errorf("reject: %w", err)
	}
	return nil
}
