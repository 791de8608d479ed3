package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"settle/ledger"
	"settle/ledger/postgres/internal/dbsqlc"
)

var _ ledger.ResolutionStore = (*Store)(nil)

// resolutionOf is a row of a resolutions query as a ledger.Resolution.
func resolutionOf(r dbsqlc.ResolutionListRow) ledger.Resolution {
	return ledger.Resolution{ID: r.ResolutionID, Tenant: r.TenantID, OperationID: r.OperationID, Fence: r.FenceToken,
		To: ledger.State(r.ToState), RemoteRef: r.RemoteRef, Reason: r.Reason, ProposedBy: r.ProposedBy,
		ProposedByName: r.ProposedByName, ProposedAt: r.ProposedAt.UTC(), DecidedBy: r.DecidedBy,
		DecidedByName: r.DecidedByName, DecidedAt: utcOrNil(r.DecidedAt), Decision: r.Decision,
		DecisionWhy: r.DecisionWhy, Kind: ledger.ResolutionKind(r.Kind)}
}

// ResolutionInsert implements ledger.ResolutionDriver.
func (d driver) ResolutionInsert(ctx context.Context, r ledger.Resolution) (ledger.Resolution, error) {
	got, err := d.q.ResolutionInsert(ctx, dbsqlc.ResolutionInsertParams{TenantID: r.Tenant, OperationID: r.OperationID,
		FenceToken: r.Fence, ToState: string(r.To), RemoteRef: r.RemoteRef, Reason: r.Reason, ProposedBy: r.ProposedBy,
		ProposedByName: r.ProposedByName, ProposedAt: r.ProposedAt, Kind: string(r.Kind)})
	if err != nil {
		return r, duplicate(err)
	}
	return resolutionOf(dbsqlc.ResolutionListRow(got)), nil
}

// ResolutionLockOpen implements ledger.ResolutionDriver with FOR UPDATE.
func (d driver) ResolutionLockOpen(ctx context.Context, tenant string, id int64) (ledger.Resolution, bool, error) {
	r, err := d.q.ResolutionLockOpen(ctx, dbsqlc.ResolutionLockOpenParams{TenantID: tenant, ResolutionID: id})
	if errors.Is(err, pgx.ErrNoRows) {
		return ledger.Resolution{}, false, nil
	}
	return resolutionOf(dbsqlc.ResolutionListRow(r)), err == nil, err
}

// ResolutionDecide implements ledger.ResolutionDriver.
func (d driver) ResolutionDecide(ctx context.Context, r ledger.Resolution) error {
	return d.q.ResolutionDecide(ctx, dbsqlc.ResolutionDecideParams{ResolutionID: r.ID, DecidedBy: r.DecidedBy,
		DecidedByName: r.DecidedByName, DecidedAt: r.DecidedAt, Decision: r.Decision, DecisionWhy: r.DecisionWhy})
}

// ResolutionList implements ledger.ResolutionDriver.
func (d driver) ResolutionList(ctx context.Context, tenant string, openOnly bool) ([]ledger.Resolution, error) {
	rows, err := d.q.ResolutionList(ctx, dbsqlc.ResolutionListParams{TenantID: tenant, OpenOnly: openOnly})
	out := make([]ledger.Resolution, len(rows))
	for i, r := range rows {
		out[i] = resolutionOf(r)
	}
	return out, err
}

// ResolutionListOpen implements ledger.ResolutionDriver.
func (d driver) ResolutionListOpen(ctx context.Context, tenants []string, all bool) ([]ledger.Resolution, error) {
	rows, err := d.q.ResolutionListOpen(ctx, dbsqlc.ResolutionListOpenParams{AllTenants: all, Tenants: tenants})
	out := make([]ledger.Resolution, len(rows))
	for i, r := range rows {
		out[i] = resolutionOf(dbsqlc.ResolutionListRow(r))
	}
	return out, err
}

// duplicate is err, or ledger.ErrDuplicateKey for a unique violation.
func duplicate(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" {
		return ledger.ErrDuplicateKey
	}
	return err
}

// resolutionTx is ledger.ResolutionTx over one pgx transaction: the SQL of
// proposals and decisions, and nothing else (the rules are in ledger).
type resolutionTx struct {
	tx pgx.Tx
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

// ApplyIfUnchanged writes the transition, its event and its callback with
// one conditional statement. An approved replay (→ UNKNOWN) is due for the
// reconciler at once.
func (t resolutionTx) ApplyIfUnchanged(ctx context.Context, o ledger.Outcome, at time.Time) (ledger.Operation, bool, error) {
	evidence, err := json.Marshal(o.Evidence)
	if err != nil {
		return ledger.Operation{}, false, err
	}
	ops, err := collect(t.tx.Query(ctx, `
WITH u AS (
	UPDATE operation_ledger SET state = $4, remote_ref = coalesce(nullif($5, ''), remote_ref),
		lease_expires_at = NULL, next_reconcile_at = CASE WHEN $4 = 'UNKNOWN' THEN $7::timestamptz END,
		reason = $6, updated_at = $7
	WHERE tenant_id = $1 AND operation_id = $2 AND state = $11 AND fence_token = $3
	RETURNING `+cols+`, $11::text AS from_state, $8::text AS actor, $6::text AS reason_ev,
		$9::jsonb AS evidence
), `+fmt.Sprintf(eventCTE, "u")+`, `+callbackCTE("$10")+`
SELECT `+cols+` FROM u`, o.Tenant, o.OperationID, o.Fence, string(o.To), o.RemoteRef, o.Reason, at,
		o.Actor, string(evidence), callbackStates(), string(o.From)))
	if err != nil || len(ops) == 0 {
		return ledger.Operation{}, false, err
	}
	t.c.Add(ops[0], o.From)
	return ops[0], true, nil
}

func (t resolutionTx) Decide(ctx context.Context, r ledger.Resolution) error {
	return t.driver().ResolutionDecide(ctx, r)
}

// driver is the Driver over the transaction.
func (t resolutionTx) driver() driver { return driver{q: dbsqlc.New(t.tx), tx: true} }

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

// inResolutionTx runs fn in one transaction and, once it has committed,
// tells the observer the transitions fn wrote.
func (s *Store) inResolutionTx(ctx context.Context, fn func(resolutionTx) error) error {
	var c ledger.Commit
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		c = ledger.Commit{}
		return fn(resolutionTx{tx, &c})
	})
	if err == nil {
		c.Tell(ctx, s.observer)
	}
	return err
}

// Propose implements ledger.ResolutionStore with ledger.ProposeIn.
func (s *Store) Propose(ctx context.Context, r ledger.Resolution) (ledger.Resolution, error) {
	var got ledger.Resolution
	err := s.inResolutionTx(ctx, func(tx resolutionTx) error {
		var err error
		got, err = ledger.ProposeIn(ctx, tx, r, s.clock())
		return err
	})
	if err != nil {
		return r, fmt.Errorf("propose: %w", err)
	}
	return got, nil
}

// Approve implements ledger.ResolutionStore with ledger.ApproveIn: the
// proposal is locked, the transition, its event and its callback are
// written by one statement, and the decision and the action are recorded,
// all in one transaction.
func (s *Store) Approve(ctx context.Context, tenant string, id int64) (ledger.Operation, error) {
	var a ledger.Approval
	err := s.inResolutionTx(ctx, func(tx resolutionTx) error {
		var err error
		a, err = ledger.ApproveIn(ctx, tx, tenant, id, nil, s.clock())
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
	err = s.inResolutionTx(ctx, func(tx resolutionTx) error {
		var err error
		a, err = ledger.ApproveIn(ctx, tx, tenant, id, rebind, s.clock())
		return err
	})
	if err != nil {
		return ledger.Operation{}, ledger.Operation{}, fmt.Errorf("approve supersede: %w", err)
	}
	return a.Operation, a.Successor, a.Err()
}

// Reject implements ledger.ResolutionStore with ledger.RejectIn.
func (s *Store) Reject(ctx context.Context, tenant string, id int64, why string) error {
	err := s.inResolutionTx(ctx, func(tx resolutionTx) error {
		return ledger.RejectIn(ctx, tx, tenant, id, why, s.clock())
	})
	if err != nil {
		return fmt.Errorf("reject: %w", err)
	}
	return nil
}
