package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"settle/ledger"
)

var _ ledger.ResolutionStore = (*Store)(nil)

const resolutionCols = `resolution_id, tenant_id, operation_id::text, fence_token, to_state, remote_ref, reason,
	proposed_by, proposed_at, decided_by, decided_at, decision, decision_why`

func scanResolution(row pgx.Row) (ledger.Resolution, error) {
	var (
		r  ledger.Resolution
		to string
	)
	err := row.Scan(&r.ID, &r.Tenant, &r.OperationID, &r.Fence, &to, &r.RemoteRef, &r.Reason,
		&r.ProposedBy, &r.ProposedAt, &r.DecidedBy, &r.DecidedAt, &r.Decision, &r.DecisionWhy)
	r.To, r.ProposedAt = ledger.State(to), r.ProposedAt.UTC()
	utcp(r.DecidedAt)
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
	got, err := scanResolution(s.pool.QueryRow(ctx, `INSERT INTO resolutions (tenant_id, operation_id,
		fence_token, to_state, remote_ref, reason, proposed_by, proposed_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING `+resolutionCols,
		op.Tenant, op.ID, op.Fence, string(r.To), r.RemoteRef, r.Reason, r.ProposedBy, s.clock()))
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" {
		return r, ledger.Errorf(ledger.EConflict, "this operation already has an open proposal; approve or reject it first")
	}
	if err != nil {
		return r, fmt.Errorf("propose: %w", err)
	}
	return got, nil
}

// Approve implements ledger.ResolutionStore: the proposal is locked, the
// transition, its event and its callback are written by one statement, and
// the decision is recorded, all in one transaction.
func (s *Store) Approve(ctx context.Context, tenant string, id int64, approver string) (ledger.Operation, error) {
	if approver == "" {
		return ledger.Operation{}, ledger.Errorf(ledger.EInvalid, "an approval needs who approves")
	}
	now := s.clock()
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return ledger.Operation{}, fmt.Errorf("approve: %w", err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	r, err := scanResolution(tx.QueryRow(ctx, `SELECT `+resolutionCols+` FROM resolutions
		WHERE tenant_id = $1 AND resolution_id = $2 AND decided_at IS NULL FOR UPDATE`, tenant, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return ledger.Operation{}, ledger.Errorf(ledger.ENotFound, "no open proposal %d", id)
	}
	if err != nil {
		return ledger.Operation{}, fmt.Errorf("approve: %w", err)
	}
	if r.ProposedBy == approver {
		return ledger.Operation{}, ledger.Errorf(ledger.EForbidden, "nobody approves their own proposal")
	}
	o := ledger.ApprovalOutcome(r, approver)
	evidence, _ := json.Marshal(o.Evidence)
	ops, err := collect(tx.Query(ctx, `
WITH u AS (
	UPDATE operation_ledger SET state = $4, remote_ref = coalesce(nullif($5, ''), remote_ref),
		lease_expires_at = NULL, next_reconcile_at = NULL, reason = $6, updated_at = $7
	WHERE tenant_id = $1 AND operation_id = $2 AND state = 'ESCALATED' AND fence_token = $3
	RETURNING `+cols+`, 'ESCALATED'::text AS from_state, $8::text AS actor, $6::text AS reason_ev,
		$9::jsonb AS evidence
), `+fmt.Sprintf(eventCTE, "u")+`, `+callbackCTE("$10")+`
SELECT `+cols+` FROM u`, tenant, r.OperationID, r.Fence, string(o.To), o.RemoteRef, o.Reason, now,
		o.Actor, string(evidence), callbackStates()))
	if err != nil {
		return ledger.Operation{}, fmt.Errorf("approve: %w", err)
	}
	decision, why := ledger.DecisionApproved, ""
	if len(ops) == 0 {
		decision, why = ledger.DecisionStale, "the operation changed after the proposal"
	}
	if _, err := tx.Exec(ctx, `UPDATE resolutions SET decided_by = $2, decided_at = $3, decision = $4,
		decision_why = $5 WHERE resolution_id = $1`, id, approver, now, decision, why); err != nil {
		return ledger.Operation{}, fmt.Errorf("approve: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
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
	tag, err := s.pool.Exec(ctx, `UPDATE resolutions SET decided_by = $3, decided_at = $4,
		decision = 'rejected', decision_why = $5
		WHERE tenant_id = $1 AND resolution_id = $2 AND decided_at IS NULL`, tenant, id, by, s.clock(), why)
	if err != nil {
		return fmt.Errorf("reject: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return ledger.Errorf(ledger.ENotFound, "no open proposal %d", id)
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
