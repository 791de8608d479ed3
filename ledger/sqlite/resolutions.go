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
)

var _ ledger.ResolutionStore = (*Store)(nil)

const resolutionCols = `resolution_id, tenant_id, operation_id, fence_token, to_state, remote_ref, reason,
	proposed_by, proposed_by_name, proposed_at, decided_by, decided_by_name, decided_at, decision, decision_why, kind`

func scanResolution(row scanner) (ledger.Resolution, error) {
	var (
		r         ledger.Resolution
		to, kind  string
		proposed  int64
		decidedAt sql.NullInt64
	)
	err := row.Scan(&r.ID, &r.Tenant, &r.OperationID, &r.Fence, &to, &r.RemoteRef, &r.Reason,
		&r.ProposedBy, &r.ProposedByName, &proposed, &r.DecidedBy, &r.DecidedByName, &decidedAt,
		&r.Decision, &r.DecisionWhy, &kind)
	r.Kind = ledger.ResolutionKind(kind)
	r.To, r.ProposedAt, r.DecidedAt = ledger.State(to), fromMicros(proposed), fromNull(decidedAt)
	return r, err
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
	got, err := scanResolution(t.tx.QueryRowContext(ctx, `INSERT INTO resolutions (tenant_id, operation_id,
		fence_token, to_state, remote_ref, reason, proposed_by, proposed_by_name, proposed_at, kind)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING `+resolutionCols,
		r.Tenant, r.OperationID, r.Fence, string(r.To), r.RemoteRef, r.Reason, r.ProposedBy, r.ProposedByName,
		micros(r.ProposedAt), string(r.Kind)))
	if err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed") {
		return r, ledger.Errorf(ledger.EConflict, "this operation already has an open proposal; approve or reject it first")
	}
	return got, err
}

func (t resolutionTx) LockOpenProposal(ctx context.Context, tenant string, id int64) (ledger.Resolution, error) {
	r, err := scanResolution(t.tx.QueryRowContext(ctx, `SELECT `+resolutionCols+` FROM resolutions
		WHERE tenant_id = ? AND resolution_id = ? AND decided_at IS NULL`, tenant, id))
	if errors.Is(err, sql.ErrNoRows) {
		return r, ledger.Errorf(ledger.ENotFound, "no open proposal %d", id)
	}
	return r, err
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
	_, err := t.tx.ExecContext(ctx, `UPDATE resolutions SET decided_by = ?, decided_by_name = ?, decided_at = ?,
		decision = ?, decision_why = ? WHERE resolution_id = ?`,
		r.DecidedBy, r.DecidedByName, microsPtr(r.DecidedAt), r.Decision, r.DecisionWhy, r.ID)
	return err
}

func (t resolutionTx) RecordAction(ctx context.Context, a ledger.Action) error {
	return recordAction(ctx, t.tx, a)
}

// InsertIfNew, ByIntent and RecordConflict create a supersede's successor
// with the same SQL as every creation.
func (t resolutionTx) InsertIfNew(ctx context.Context, op ledger.Operation) (ledger.Operation, bool, error) {
	return createTx(t).InsertIfNew(ctx, op)
}

func (t resolutionTx) ByIntent(ctx context.Context, tenant, opType, intentRef string) (ledger.Operation, error) {
	return createTx(t).ByIntent(ctx, tenant, opType, intentRef)
}

func (t resolutionTx) RecordConflict(ctx context.Context, existing ledger.Operation, rejected []byte, at time.Time) error {
	return createTx(t).RecordConflict(ctx, existing, rejected, at)
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

// Resolutions implements ledger.ResolutionStore.
func (s *Store) Resolutions(ctx context.Context, tenant string, open bool) ([]ledger.Resolution, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+resolutionCols+` FROM resolutions
		WHERE tenant_id = ?1 AND (NOT ?2 OR decided_at IS NULL) ORDER BY resolution_id DESC LIMIT 500`, tenant, open)
	if err != nil {
		return nil, fmt.Errorf("resolutions: %w", err)
	}
	defer rows.Close()
	var out []ledger.Resolution
	for rows.Next() {
		r, err := scanResolution(rows)
		if err != nil {
			return nil, fmt.Errorf("resolutions: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// OpenResolutions implements ledger.ResolutionStore.
func (s *Store) OpenResolutions(ctx context.Context, tenants []string, all bool) ([]ledger.Resolution, error) {
	list, err := json.Marshal(tenants)
	if err != nil {
		return nil, fmt.Errorf("open resolutions: %w", err)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+resolutionCols+` FROM resolutions
		WHERE decided_at IS NULL AND (?1 OR tenant_id IN (SELECT value FROM json_each(?2)))
		ORDER BY resolution_id LIMIT 500`, all, string(list))
	if err != nil {
		return nil, fmt.Errorf("open resolutions: %w", err)
	}
	defer rows.Close()
	var out []ledger.Resolution
	for rows.Next() {
		r, err := scanResolution(rows)
		if err != nil {
			return nil, fmt.Errorf("open resolutions: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
