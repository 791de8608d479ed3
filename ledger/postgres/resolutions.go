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
)

var _ ledger.ResolutionStore = (*Store)(nil)

const resolutionCols = `resolution_id, tenant_id, operation_id::text, fence_token, to_state, remote_ref, reason,
	proposed_by, proposed_by_name, proposed_at, decided_by, decided_by_name, decided_at, decision, decision_why, kind`

func scanResolution(row pgx.Row) (ledger.Resolution, error) {
	var (
		r        ledger.Resolution
		to, kind string
	)
	err := row.Scan(&r.ID, &r.Tenant, &r.OperationID, &r.Fence, &to, &r.RemoteRef, &r.Reason,
		&r.ProposedBy, &r.ProposedByName, &r.ProposedAt, &r.DecidedBy, &r.DecidedByName, &r.DecidedAt,
		&r.Decision, &r.DecisionWhy, &kind)
	r.Kind = ledger.ResolutionKind(kind)
	r.To, r.ProposedAt = ledger.State(to), r.ProposedAt.UTC()
	utcp(r.DecidedAt)
	return r, err
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
	got, err := scanResolution(t.tx.QueryRow(ctx, `INSERT INTO resolutions (tenant_id, operation_id,
		fence_token, to_state, remote_ref, reason, proposed_by, proposed_by_name, proposed_at, kind)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING `+resolutionCols,
		r.Tenant, r.OperationID, r.Fence, string(r.To), r.RemoteRef, r.Reason, r.ProposedBy, r.ProposedByName,
		r.ProposedAt, string(r.Kind)))
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" {
		return r, ledger.Errorf(ledger.EConflict, "this operation already has an open proposal; approve or reject it first")
	}
	return got, err
}

func (t resolutionTx) LockOpenProposal(ctx context.Context, tenant string, id int64) (ledger.Resolution, error) {
	r, err := scanResolution(t.tx.QueryRow(ctx, `SELECT `+resolutionCols+` FROM resolutions
		WHERE tenant_id = $1 AND resolution_id = $2 AND decided_at IS NULL FOR UPDATE`, tenant, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return r, ledger.Errorf(ledger.ENotFound, "no open proposal %d", id)
	}
	return r, err
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
	_, err := t.tx.Exec(ctx, `UPDATE resolutions SET decided_by = $2, decided_by_name = $3, decided_at = $4,
		decision = $5, decision_why = $6 WHERE resolution_id = $1`,
		r.ID, r.DecidedBy, r.DecidedByName, r.DecidedAt, r.Decision, r.DecisionWhy)
	return err
}

func (t resolutionTx) RecordAction(ctx context.Context, a ledger.Action) error {
	return recordAction(ctx, t.tx, a)
}

// InsertIfNew, ByIntent and RecordConflict create a supersede's successor
// with the same SQL as every creation.
func (t resolutionTx) InsertIfNew(ctx context.Context, op ledger.Operation) (ledger.Operation, bool, error) {
	return createTx{t.tx, t.c}.InsertIfNew(ctx, op)
}

func (t resolutionTx) ByIntent(ctx context.Context, tenant, opType, intentRef string) (ledger.Operation, error) {
	return createTx{t.tx, t.c}.ByIntent(ctx, tenant, opType, intentRef)
}

func (t resolutionTx) RecordConflict(ctx context.Context, existing ledger.Operation, rejected []byte, at time.Time) error {
	return createTx{t.tx, t.c}.RecordConflict(ctx, existing, rejected, at)
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

// Resolutions implements ledger.ResolutionStore.
func (s *Store) Resolutions(ctx context.Context, tenant string, open bool) ([]ledger.Resolution, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+resolutionCols+` FROM resolutions
		WHERE tenant_id = $1 AND (NOT $2 OR decided_at IS NULL) ORDER BY resolution_id DESC LIMIT 500`, tenant, open)
	if err != nil {
		return nil, fmt.Errorf("resolutions: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.Resolution, error) { return scanResolution(r) })
	if err != nil {
		return nil, fmt.Errorf("resolutions: %w", err)
	}
	return out, nil
}

// OpenResolutions implements ledger.ResolutionStore.
func (s *Store) OpenResolutions(ctx context.Context, tenants []string, all bool) ([]ledger.Resolution, error) {
	if tenants == nil {
		tenants = []string{}
	}
	rows, err := s.pool.Query(ctx, `SELECT `+resolutionCols+` FROM resolutions
		WHERE decided_at IS NULL AND ($1 OR tenant_id = ANY($2)) ORDER BY resolution_id LIMIT 500`, all, tenants)
	if err != nil {
		return nil, fmt.Errorf("open resolutions: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.Resolution, error) { return scanResolution(r) })
	if err != nil {
		return nil, fmt.Errorf("open resolutions: %w", err)
	}
	return out, nil
}
