package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"settle/ledger"
	"settle/ledger/sqlite/internal/dbsqlc"
)

var _ ledger.ResolutionStore = (*Store)(nil)

// resolutionOf is a row of a resolutions query as a ledger.Resolution.
func resolutionOf(r dbsqlc.ResolutionListRow) ledger.Resolution {
	return ledger.Resolution{ID: r.ResolutionID, Tenant: r.TenantID, OperationID: r.OperationID, Fence: r.FenceToken,
		To: ledger.State(r.ToState), RemoteRef: r.RemoteRef, Reason: r.Reason, ProposedBy: r.ProposedBy,
		ProposedByName: r.ProposedByName, ProposedAt: fromMicros(r.ProposedAt), DecidedBy: r.DecidedBy,
		DecidedByName: r.DecidedByName, DecidedAt: fromNull(r.DecidedAt), Decision: r.Decision,
		DecisionWhy: r.DecisionWhy, Kind: ledger.ResolutionKind(r.Kind)}
}

// ResolutionInsert implements ledger.ResolutionDriver.
func (d driver) ResolutionInsert(ctx context.Context, r ledger.Resolution) (ledger.Resolution, error) {
	got, err := d.w.ResolutionInsert(ctx, dbsqlc.ResolutionInsertParams{TenantID: r.Tenant, OperationID: r.OperationID,
		FenceToken: r.Fence, ToState: string(r.To), RemoteRef: r.RemoteRef, Reason: r.Reason, ProposedBy: r.ProposedBy,
		ProposedByName: r.ProposedByName, ProposedAt: micros(r.ProposedAt), Kind: string(r.Kind)})
	if err != nil {
		return r, duplicate(err)
	}
	return resolutionOf(dbsqlc.ResolutionListRow(got)), nil
}

// ResolutionLockOpen implements ledger.ResolutionDriver: the writer's
// transaction already excludes other deciders.
func (d driver) ResolutionLockOpen(ctx context.Context, tenant string, id int64) (ledger.Resolution, bool, error) {
	r, err := d.w.ResolutionLockOpen(ctx, dbsqlc.ResolutionLockOpenParams{TenantID: tenant, ResolutionID: id})
	if errors.Is(err, sql.ErrNoRows) {
		return ledger.Resolution{}, false, nil
	}
	return resolutionOf(dbsqlc.ResolutionListRow(r)), err == nil, err
}

// ResolutionDecide implements ledger.ResolutionDriver.
func (d driver) ResolutionDecide(ctx context.Context, r ledger.Resolution) error {
	var at sql.NullInt64
	if r.DecidedAt != nil {
		at = sql.NullInt64{Int64: micros(*r.DecidedAt), Valid: true}
	}
	return d.w.ResolutionDecide(ctx, dbsqlc.ResolutionDecideParams{ResolutionID: r.ID, DecidedBy: r.DecidedBy,
		DecidedByName: r.DecidedByName, DecidedAt: at, Decision: r.Decision, DecisionWhy: r.DecisionWhy})
}

// ResolutionList implements ledger.ResolutionDriver.
func (d driver) ResolutionList(ctx context.Context, tenant string, openOnly bool) ([]ledger.Resolution, error) {
	rows, err := d.r.ResolutionList(ctx, dbsqlc.ResolutionListParams{TenantID: tenant, OpenOnly: openOnly})
	out := make([]ledger.Resolution, len(rows))
	for i, r := range rows {
		out[i] = resolutionOf(r)
	}
	return out, err
}

// ResolutionListOpen implements ledger.ResolutionDriver.
func (d driver) ResolutionListOpen(ctx context.Context, tenants []string, all bool) ([]ledger.Resolution, error) {
	list, err := json.Marshal(tenants)
	if err != nil {
		return nil, err
	}
	rows, err := d.r.ResolutionListOpen(ctx, dbsqlc.ResolutionListOpenParams{AllTenants: all, Tenants: string(list)})
	out := make([]ledger.Resolution, len(rows))
	for i, r := range rows {
		out[i] = resolutionOf(dbsqlc.ResolutionListRow(r))
	}
	return out, err
}

// duplicate is err, or ledger.ErrDuplicateKey for a unique violation.
func duplicate(err error) error {
	if err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed") {
		return ledger.ErrDuplicateKey
	}
	return err
}

// resolutionTx is ledger.ResolutionTx over one IMMEDIATE transaction: the
// SQL of proposals and decisions, and nothing else (the rules are in
// ledger). The writer's transaction already excludes other deciders.
type resolutionTx struct {
	tx *sql.Tx
	c  *ledger.Commit // what it writes, told after the commit
}

var _ ledger.ResolutionTx = resolutionTx{}

func (t resolutionTx) Operation(ctx context.Context, tenant, id string) (ledger.Operation, error) {
	return get(ctx, t.tx, tenant, id)
}

func (t resolutionTx) InsertProposal(ctx context.Context, r ledger.Resolution) (ledger.Resolution, error) {
	return t.driver().ResolutionInsert(ctx, r)
}

func (t resolutionTx) LockOpenProposal(ctx context.Context, tenant string, id int64) (ledger.Resolution, bool, error) {
	return t.driver().ResolutionLockOpen(ctx, tenant, id)
}

// ApplyIfUnchanged writes the transition with one conditional statement,
// then its event and its callback. An approved replay (→ UNKNOWN) is due
// for the reconciler at once.
func (t resolutionTx) ApplyIfUnchanged(ctx context.Context, o ledger.Outcome, at time.Time) (ledger.Operation, bool, error) {
	evidence, err := json.Marshal(o.Evidence)
	if err != nil {
		return ledger.Operation{}, false, err
	}
	ops, err := collect(t.tx.QueryContext(ctx, `UPDATE operation_ledger SET state = ?,
		remote_ref = coalesce(nullif(?, ''), remote_ref), lease_expires_at = NULL,
		next_reconcile_at = CASE WHEN ? = 'UNKNOWN' THEN ? END, reason = ?, updated_at = ?
		WHERE tenant_id = ? AND operation_id = ? AND state = ? AND fence_token = ?
		RETURNING `+cols, string(o.To), o.RemoteRef, string(o.To), micros(at), o.Reason, micros(at), o.Tenant, o.OperationID,
		string(o.From), o.Fence))
	if err != nil || len(ops) == 0 {
		return ledger.Operation{}, false, err
	}
	evs := []event{{op: ops[0], from: o.From, actor: o.Actor, reason: o.Reason, evidence: evidence}}
	if err := appendEvents(ctx, t.tx, t.c, evs); err != nil {
		return ledger.Operation{}, false, err
	}
	if err := enqueueCallbacks(ctx, t.tx, evs); err != nil {
		return ledger.Operation{}, false, err
	}
	return ops[0], true, nil
}

func (t resolutionTx) Decide(ctx context.Context, r ledger.Resolution) error {
	return t.driver().ResolutionDecide(ctx, r)
}

// driver is the Driver over the writer's transaction.
func (t resolutionTx) driver() driver {
	q := dbsqlc.New(t.tx)
	return driver{w: q, r: q, tx: true}
}

func (t resolutionTx) RecordAction(ctx context.Context, a ledger.Action) error {
	return recordAction(ctx, t.tx, a)
}

// InsertIfNew, ByIntent and RecordConflict create a supersede's successor
// with the same SQL as every creation.
func (t resolutionTx) InsertIfNew(ctx context.Context, op ledger.Operation) (ledger.Operation, bool, error) {
	return ledger.CreateOver(t.driver(), t.c).InsertIfNew(ctx, op)
}

func (t resolutionTx) ByIntent(ctx context.Context, tenant, opType, intentRef string) (ledger.Operation, error) {
	return ledger.CreateOver(t.driver(), t.c).ByIntent(ctx, tenant, opType, intentRef)
}

func (t resolutionTx) RecordConflict(ctx context.Context, existing ledger.Operation, rejected []byte, at time.Time) error {
	return ledger.CreateOver(t.driver(), t.c).RecordConflict(ctx, existing, rejected, at)
}

// Propose implements ledger.ResolutionStore with ledger.ProposeIn.
func (s *Store) Propose(ctx context.Context, r ledger.Resolution) (ledger.Resolution, error) {
	var got ledger.Resolution
	err := s.inObservedTx(ctx, func(tx *sql.Tx, c *ledger.Commit) error {
		var err error
		got, err = ledger.ProposeIn(ctx, resolutionTx{tx, c}, r, s.clock())
		return err
	})
	if err != nil {
		return r, fmt.Errorf("propose: %w", err)
	}
	return got, nil
}

// Approve implements ledger.ResolutionStore with ledger.ApproveIn, in one
// IMMEDIATE transaction.
func (s *Store) Approve(ctx context.Context, tenant string, id int64) (ledger.Operation, error) {
	var a ledger.Approval
	err := s.inObservedTx(ctx, func(tx *sql.Tx, c *ledger.Commit) error {
		var err error
		a, err = ledger.ApproveIn(ctx, resolutionTx{tx, c}, tenant, id, nil, s.clock())
		return err
	})
	if err != nil {
		return ledger.Operation{}, fmt.Errorf("approve: %w", err)
	}
	return a.Operation, a.Err()
}

// ApproveSupersede implements ledger.ResolutionStore with ledger.ApproveIn:
// the transition, the successor's creation, the decision and the actions
// commit together or not at all.
func (s *Store) ApproveSupersede(ctx context.Context, tenant string, id int64, rebind ledger.Rebinder) (superseded, successor ledger.Operation, err error) {
	var a ledger.Approval
	err = s.inObservedTx(ctx, func(tx *sql.Tx, c *ledger.Commit) error {
		var err error
		a, err = ledger.ApproveIn(ctx, resolutionTx{tx, c}, tenant, id, rebind, s.clock())
		return err
	})
	if err != nil {
		return ledger.Operation{}, ledger.Operation{}, fmt.Errorf("approve supersede: %w", err)
	}
	return a.Operation, a.Successor, a.Err()
}

// Reject implements ledger.ResolutionStore with ledger.RejectIn.
func (s *Store) Reject(ctx context.Context, tenant string, id int64, why string) error {
	err := s.inObservedTx(ctx, func(tx *sql.Tx, c *ledger.Commit) error {
		return ledger.RejectIn(ctx, resolutionTx{tx, c}, tenant, id, why, s.clock())
	})
	if err != nil {
		return fmt.Errorf("reject: %w", err)
	}
	return nil
}
