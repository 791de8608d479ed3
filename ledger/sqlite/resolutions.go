package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"settle/ledger"
)

var _ ledger.ResolutionStore = (*Store)(nil)

const resolutionCols = `resolution_id, tenant_id, operation_id, fence_token, to_state, remote_ref, reason,
	proposed_by, proposed_at, decided_by, decided_at, decision, decision_why`

func scanResolution(row scanner) (ledger.Resolution, error) {
	var (
		r         ledger.Resolution
		to        string
		proposed  int64
		decidedAt sql.NullInt64
	)
	err := row.Scan(&r.ID, &r.Tenant, &r.OperationID, &r.Fence, &to, &r.RemoteRef, &r.Reason,
		&r.ProposedBy, &proposed, &r.DecidedBy, &decidedAt, &r.Decision, &r.DecisionWhy)
	r.To, r.ProposedAt, r.DecidedAt = ledger.State(to), fromMicros(proposed), fromNull(decidedAt)
	return r, err
}

// Propose implements ledger.ResolutionStore.
func (s *Store) Propose(ctx context.Context, r ledger.Resolution) (ledger.Resolution, error) {
	op, err := s.Get(ctx, r.Tenant, r.OperationID)
	if err != nil {
		return r, err
	}
	if err := ledger.ValidateProposal(op, r); err != nil {
		return r, err
	}
	got, err := scanResolution(s.w.QueryRowContext(ctx, `INSERT INTO resolutions (tenant_id, operation_id,
		fence_token, to_state, remote_ref, reason, proposed_by, proposed_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING `+resolutionCols,
		op.Tenant, op.ID, op.Fence, string(r.To), r.RemoteRef, r.Reason, r.ProposedBy, micros(s.clock())))
	if err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed") {
		return r, ledger.Errorf(ledger.EConflict, "this operation already has an open proposal; approve or reject it first")
	}
	if err != nil {
		return r, fmt.Errorf("propose: %w", err)
	}
	return got, nil
}

// Approve implements ledger.ResolutionStore in one IMMEDIATE transaction.
func (s *Store) Approve(ctx context.Context, tenant string, id int64, approver string) (ledger.Operation, error) {
	if approver == "" {
		return ledger.Operation{}, ledger.Errorf(ledger.EInvalid, "an approval needs who approves")
	}
	now := s.clock()
	var ops []ledger.Operation
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		r, err := scanResolution(tx.QueryRowContext(ctx, `SELECT `+resolutionCols+` FROM resolutions
			WHERE tenant_id = ? AND resolution_id = ? AND decided_at IS NULL`, tenant, id))
		if errors.Is(err, sql.ErrNoRows) {
			return ledger.Errorf(ledger.ENotFound, "no open proposal %d", id)
		}
		if err != nil {
			return err
		}
		if r.ProposedBy == approver {
			return ledger.Errorf(ledger.EForbidden, "nobody approves their own proposal")
		}
		o := ledger.ApprovalOutcome(r, approver)
		evidence, _ := json.Marshal(o.Evidence)
		ops, err = collect(tx.QueryContext(ctx, `UPDATE operation_ledger SET state = ?,
			remote_ref = coalesce(nullif(?, ''), remote_ref), lease_expires_at = NULL,
			next_reconcile_at = NULL, reason = ?, updated_at = ?
			WHERE tenant_id = ? AND operation_id = ? AND state = 'ESCALATED' AND fence_token = ?
			RETURNING `+cols, string(o.To), o.RemoteRef, o.Reason, micros(now), tenant, r.OperationID, r.Fence))
		if err != nil {
			return err
		}
		decision, why := ledger.DecisionApproved, ""
		if len(ops) == 0 {
			decision, why = ledger.DecisionStale, "the operation changed after the proposal"
		} else {
			evs := []event{{op: ops[0], from: ledger.Escalated, actor: o.Actor, reason: o.Reason, evidence: evidence}}
			if err := appendEvents(ctx, tx, evs); err != nil {
				return err
			}
			if err := enqueueCallbacks(ctx, tx, evs); err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, `UPDATE resolutions SET decided_by = ?, decided_at = ?, decision = ?,
			decision_why = ? WHERE resolution_id = ?`, approver, micros(now), decision, why, id)
		return err
	})
	var le *ledger.Error
	if errors.As(err, &le) {
		return ledger.Operation{}, err
	}
	if err != nil {
		return ledger.Operation{}, fmt.Errorf("approve: %w", err)
	}
	if len(ops) == 0 {
		return ledger.Operation{}, ledger.Errorf(ledger.EStaleFence, "the operation changed after the proposal; propose again")
	}
	return ops[0], nil
}

// Reject implements ledger.ResolutionStore.
func (s *Store) Reject(ctx context.Context, tenant string, id int64, by, why string) error {
	if by == "" || why == "" {
		return ledger.Errorf(ledger.EInvalid, "a rejection needs who rejects and why")
	}
	res, err := s.w.ExecContext(ctx, `UPDATE resolutions SET decided_by = ?, decided_at = ?,
		decision = 'rejected', decision_why = ?
		WHERE tenant_id = ? AND resolution_id = ? AND decided_at IS NULL`, by, micros(s.clock()), why, tenant, id)
	if err != nil {
		return fmt.Errorf("reject: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ledger.Errorf(ledger.ENotFound, "no open proposal %d", id)
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
