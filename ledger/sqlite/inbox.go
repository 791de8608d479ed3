package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"settle/ledger"
)

var _ ledger.InboxStore = (*Store)(nil)

// Receive implements ledger.InboxStore.
func (s *Store) Receive(ctx context.Context, target string, body []byte) (int64, bool, error) {
	sum := sha256.Sum256(body)
	now := micros(s.clock())
	var (
		id  int64
		dup bool
	)
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `INSERT INTO webhook_inbox (target, body_sha256, body, received_at, next_attempt_at)
			VALUES (?1, ?2, ?3, ?4, ?4) ON CONFLICT (target, body_sha256) DO NOTHING RETURNING delivery_id`,
			target, sum[:], body, now).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			dup = true
			return tx.QueryRowContext(ctx, `SELECT delivery_id FROM webhook_inbox WHERE target = ? AND body_sha256 = ?`,
				target, sum[:]).Scan(&id)
		}
		return err
	})
	if err != nil {
		return 0, false, fmt.Errorf("receive: %w", err)
	}
	return id, dup, nil
}

// ClaimDeliveries implements ledger.InboxStore.
func (s *Store) ClaimDeliveries(ctx context.Context, n int, lease time.Duration) ([]ledger.Delivery, error) {
	now := s.clock()
	var ds []ledger.Delivery
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `UPDATE webhook_inbox SET attempts = attempts + 1,
				failed_attempts = failed_attempts + 1, next_attempt_at = ?3
			WHERE delivery_id IN (SELECT delivery_id FROM webhook_inbox
				WHERE processed_at IS NULL AND next_attempt_at <= ?1 ORDER BY next_attempt_at LIMIT ?2)
			RETURNING delivery_id, target, body, received_at, attempts, outcome, failed_attempts, last_error`,
			micros(now), n, micros(now.Add(lease)))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				d  ledger.Delivery
				at int64
			)
			if err := rows.Scan(&d.ID, &d.Target, &d.Body, &at, &d.Attempts, &d.Outcome, &d.Failures, &d.LastError); err != nil {
				return err
			}
			d.ReceivedAt = fromMicros(at)
			ds = append(ds, d)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("claim deliveries: %w", err)
	}
	return ds, nil
}

// FinishDelivery implements ledger.InboxStore.
func (s *Store) FinishDelivery(ctx context.Context, id int64, outcome string) error {
	_, err := s.w.ExecContext(ctx, `UPDATE webhook_inbox SET processed_at = ?, next_attempt_at = NULL,
		body = NULL, outcome = ? WHERE delivery_id = ?`, micros(s.clock()), outcome, id)
	if err != nil {
		return fmt.Errorf("finish delivery: %w", err)
	}
	return nil
}

// DeferDelivery implements ledger.InboxStore.
func (s *Store) DeferDelivery(ctx context.Context, id int64, until time.Time, outcome string) error {
	_, err := s.w.ExecContext(ctx, `UPDATE webhook_inbox SET next_attempt_at = ?, outcome = ?,
		failed_attempts = max(failed_attempts - 1, 0)
		WHERE delivery_id = ? AND processed_at IS NULL`, micros(until), outcome, id)
	if err != nil {
		return fmt.Errorf("defer delivery: %w", err)
	}
	return nil
}

// FailDelivery implements ledger.InboxStore.
func (s *Store) FailDelivery(ctx context.Context, id int64, until time.Time, reason string) error {
	_, err := s.w.ExecContext(ctx, `UPDATE webhook_inbox SET next_attempt_at = ?, last_error = ?,
		outcome = 'failed; retried'
		WHERE delivery_id = ? AND processed_at IS NULL`, micros(until), ledger.PlainText(reason, 500), id)
	if err != nil {
		return fmt.Errorf("fail delivery: %w", err)
	}
	return nil
}

// Quarantine implements ledger.InboxStore.
func (s *Store) Quarantine(ctx context.Context, q ledger.QuarantineItem) (int64, error) {
	res, err := s.w.ExecContext(ctx, `INSERT INTO quarantine (target, delivery_id, reason, event_id,
		claimed_reference, claimed_tenant, remote_id, operation_id, operation_tenant, quarantined_at,
		scope_tenant)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		q.Target, q.DeliveryID, q.Reason, q.EventID, q.Reference, q.Tenant, q.RemoteID, q.OperationID,
		q.OpTenant, micros(s.clock()), q.ScopeTenant())
	if err != nil {
		return 0, fmt.Errorf("quarantine: %w", err)
	}
	return res.LastInsertId()
}

// ResolveQuarantine implements ledger.InboxStore.
func (s *Store) ResolveQuarantine(ctx context.Context, tenant string, id int64, resolution string) error {
	if resolution == "" || len(resolution) > 500 {
		return ledger.Errorf(ledger.EInvalid, "a quarantine resolution needs the decision (at most 500 characters)")
	}
	object := strconv.FormatInt(id, 10)
	err := s.withAction(ctx, ledger.ActionQuarantineResolve, tenant, object, func(tx *sql.Tx, a *ledger.Action) error {
		a.Reason = resolution
		err := tx.QueryRowContext(ctx, `UPDATE quarantine SET resolved_at = ?, resolved_by = ?, resolved_by_name = ?,
			resolution = ?, resolved_by_role = ?, resolution_kind = 'dismissed'
			WHERE scope_tenant = ? AND quarantine_id = ? AND resolved_at IS NULL RETURNING operation_id`,
			micros(a.At), a.Subject, a.Name, resolution, a.Role, tenant, id).Scan(&a.OperationID)
		if errors.Is(err, sql.ErrNoRows) {
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
	if _, err := get(ctx, s.r, tenant, id); err != nil {
		return ledger.Operation{}, err
	}
	now := s.clock()
	var ops []ledger.Operation
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		ops, err = collect(tx.QueryContext(ctx, `UPDATE operation_ledger SET fence_token = fence_token + 1,
			lease_expires_at = ?3, next_reconcile_at = ?3, updated_at = ?4
			WHERE tenant_id = ?1 AND operation_id = ?2 AND state = 'UNKNOWN'
				AND (lease_expires_at IS NULL OR lease_expires_at <= ?4)
			RETURNING `+cols, tenant, id, micros(now.Add(lease)), micros(now)))
		return err
	})
	if err != nil {
		return ledger.Operation{}, fmt.Errorf("lease operation: %w", err)
	}
	if len(ops) == 0 {
		return ledger.Operation{}, ledger.Errorf(ledger.EStaleFence, "operation is not UNKNOWN or is held by another worker")
	}
	return ops[0], nil
}
