package postgres

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"settle/ledger"
)

var _ ledger.InboxStore = (*Store)(nil)

// Receive implements ledger.InboxStore.
func (s *Store) Receive(ctx context.Context, target string, body []byte) (int64, bool, error) {
	sum := sha256.Sum256(body)
	now := s.clock()
	var id int64
	err := s.pool.QueryRow(ctx, `INSERT INTO webhook_inbox (target, body_sha256, body, received_at, next_attempt_at)
		VALUES ($1, $2, $3, $4, $4) ON CONFLICT (target, body_sha256) DO NOTHING RETURNING delivery_id`,
		target, sum[:], body, now).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		err = s.pool.QueryRow(ctx, `SELECT delivery_id FROM webhook_inbox WHERE target = $1 AND body_sha256 = $2`,
			target, sum[:]).Scan(&id)
		if err != nil {
			return 0, false, fmt.Errorf("receive: %w", err)
		}
		return id, true, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("receive: %w", err)
	}
	return id, false, nil
}

// ClaimDeliveries implements ledger.InboxStore.
func (s *Store) ClaimDeliveries(ctx context.Context, n int, lease time.Duration) ([]ledger.Delivery, error) {
	now := s.clock()
	rows, err := s.pool.Query(ctx, `
WITH picked AS (
	SELECT delivery_id FROM webhook_inbox
	WHERE processed_at IS NULL AND next_attempt_at <= $1
	ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED
)
UPDATE webhook_inbox w SET attempts = w.attempts + 1, failed_attempts = w.failed_attempts + 1,
	next_attempt_at = $3
FROM picked p WHERE w.delivery_id = p.delivery_id
RETURNING w.delivery_id, w.target, w.body, w.received_at, w.attempts, w.outcome, w.failed_attempts,
	w.last_error`, now, n, now.Add(lease))
	if err != nil {
		return nil, fmt.Errorf("claim deliveries: %w", err)
	}
	ds, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.Delivery, error) {
		var d ledger.Delivery
		err := r.Scan(&d.ID, &d.Target, &d.Body, &d.ReceivedAt, &d.Attempts, &d.Outcome, &d.Failures, &d.LastError)
		d.ReceivedAt = d.ReceivedAt.UTC()
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("claim deliveries: %w", err)
	}
	return ds, nil
}

// FinishDelivery implements ledger.InboxStore.
func (s *Store) FinishDelivery(ctx context.Context, id int64, outcome string) error {
	_, err := s.pool.Exec(ctx, `UPDATE webhook_inbox SET processed_at = $2, next_attempt_at = NULL,
		body = NULL, outcome = $3 WHERE delivery_id = $1`, id, s.clock(), outcome)
	if err != nil {
		return fmt.Errorf("finish delivery: %w", err)
	}
	return nil
}

// DeferDelivery implements ledger.InboxStore.
func (s *Store) DeferDelivery(ctx context.Context, id int64, until time.Time, outcome string) error {
	_, err := s.pool.Exec(ctx, `UPDATE webhook_inbox SET next_attempt_at = $2, outcome = $3,
		failed_attempts = greatest(failed_attempts - 1, 0)
		WHERE delivery_id = $1 AND processed_at IS NULL`, id, until, outcome)
	if err != nil {
		return fmt.Errorf("defer delivery: %w", err)
	}
	return nil
}

// FailDelivery implements ledger.InboxStore.
func (s *Store) FailDelivery(ctx context.Context, id int64, until time.Time, reason string) error {
	_, err := s.pool.Exec(ctx, `UPDATE webhook_inbox SET next_attempt_at = $2, last_error = $3,
		outcome = 'failed; retried'
		WHERE delivery_id = $1 AND processed_at IS NULL`, id, until, ledger.PlainText(reason, 500))
	if err != nil {
		return fmt.Errorf("fail delivery: %w", err)
	}
	return nil
}

// Quarantine implements ledger.InboxStore.
func (s *Store) Quarantine(ctx context.Context, q ledger.QuarantineItem) (int64, error) {
	var id int64
	err := s.pool.QueryRow(ctx, `INSERT INTO quarantine (target, delivery_id, reason, event_id,
		claimed_reference, claimed_tenant, remote_id, operation_id, operation_tenant, quarantined_at,
		scope_tenant)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING quarantine_id`,
		q.Target, q.DeliveryID, q.Reason, q.EventID, q.Reference, q.Tenant, q.RemoteID, q.OperationID,
		q.OpTenant, s.clock(), q.ScopeTenant()).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("quarantine: %w", err)
	}
	return id, nil
}

// ResolveQuarantine implements ledger.InboxStore.
func (s *Store) ResolveQuarantine(ctx context.Context, tenant string, id int64, resolution string) error {
	if resolution == "" || len(resolution) > 500 {
		return ledger.Errorf(ledger.EInvalid, "a quarantine resolution needs the decision (at most 500 characters)")
	}
	object := strconv.FormatInt(id, 10)
	err := s.withAction(ctx, ledger.ActionQuarantineResolve, tenant, object, func(tx pgx.Tx, a *ledger.Action) error {
		a.Reason = resolution
		err := tx.QueryRow(ctx, `UPDATE quarantine SET resolved_at = $3, resolved_by = $4, resolved_by_name = $5,
			resolution = $6, resolved_by_role = $7, resolution_kind = 'dismissed'
			WHERE scope_tenant = $1 AND quarantine_id = $2 AND resolved_at IS NULL RETURNING operation_id`,
			tenant, id, a.At, a.Subject, a.Name, resolution, a.Role).Scan(&a.OperationID)
		if errors.Is(err, pgx.ErrNoRows) {
			return ledger.Errorf(ledger.ENotFound, "no open quarantine item %d", id)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("resolve quarantine: %w", err)
	}
	return nil
}

// LeaseOperation implements ledger.InboxStore.
func (s *Store) LeaseOperation(ctx context.Context, tenant, id string, lease time.Duration) (ledger.Operation, error) {
	if _, err := get(ctx, s.pool, tenant, id); err != nil {
		return ledger.Operation{}, err
	}
	now := s.clock()
	ops, err := collect(s.pool.Query(ctx, `UPDATE operation_ledger SET fence_token = fence_token + 1,
		lease_expires_at = $3, next_reconcile_at = $3, updated_at = $4
		WHERE tenant_id = $1 AND operation_id = $2 AND state = 'UNKNOWN'
			AND (lease_expires_at IS NULL OR lease_expires_at <= $4)
		RETURNING `+cols, tenant, id, now.Add(lease), now))
	if err != nil {
		return ledger.Operation{}, fmt.Errorf("lease operation: %w", err)
	}
	if len(ops) == 0 {
		return ledger.Operation{}, ledger.Errorf(ledger.EStaleFence, "operation is not UNKNOWN or is held by another worker")
	}
	return ops[0], nil
}
