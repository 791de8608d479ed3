package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"settle/ledger"
	"settle/ledger/sqlite/internal/dbsqlc"
)

var _ ledger.CallbackStore = (*Store)(nil)

// enqueueCallbacks queues, inside record's transaction, one notification for
// each applied transition to a state the tenant is told about, when the
// tenant has a callback. Sharing the transaction is the point: the
// transition and its notification commit, or roll back, together. ON
// CONFLICT keeps it to one notification per state reached.
func enqueueCallbacks(ctx context.Context, tx *sql.Tx, evs []event) error {
	for _, e := range evs {
		if e.op.State == ledger.Escalated {
			// The owning team's notice (escalations.go), whether or not
			// the tenant has a callback.
			_, err := tx.ExecContext(ctx, `INSERT INTO escalation_outbox (tenant_id, operation_id,
					fence_token, created_at, next_attempt_at) VALUES (?1, ?2, ?3, ?4, ?4)
				ON CONFLICT (tenant_id, operation_id, fence_token) DO NOTHING`,
				e.op.Tenant, e.op.ID, e.op.Fence, micros(e.op.UpdatedAt))
			if err != nil {
				return fmt.Errorf("queue escalation notice: %w", err)
			}
		}
		if !ledger.CallbackState(e.op.State) {
			continue
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO callback_outbox (tenant_id, operation_id, state,
				fence_token, created_at, next_attempt_at)
			SELECT ?1, ?2, ?3, ?4, ?5, ?5 FROM tenant_callbacks WHERE tenant_id = ?1
			ON CONFLICT (tenant_id, operation_id, state) DO NOTHING`,
			e.op.Tenant, e.op.ID, string(e.op.State), e.op.Fence, micros(e.op.UpdatedAt))
		if err != nil {
			return fmt.Errorf("queue callback: %w", err)
		}
	}
	return nil
}

// SetCallback implements ledger.CallbackStore.
func (s *Store) SetCallback(ctx context.Context, tenant, url string, secret []byte, now time.Time) error {
	if err := ledger.ValidateCallback(tenant, url, secret); err != nil {
		return err
	}
	err := s.withAction(ctx, ledger.ActionCallbackSet, tenant, tenant, func(tx *sql.Tx, a *ledger.Action) error {
		a.Reason = ledger.CallbackActionURL(url)
		_, err := tx.ExecContext(ctx, `INSERT INTO tenant_callbacks (tenant_id, url, secret, created_at, updated_at)
			VALUES (?1, ?2, ?3, ?4, ?4)
			ON CONFLICT (tenant_id) DO UPDATE SET url = excluded.url, secret = excluded.secret,
				updated_at = excluded.updated_at, last_attempt_at = NULL, last_attempt_status = 0,
				last_attempt_error = '', last_success_at = NULL, failures_since_success = 0`, tenant, url, secret, micros(now))
		return err
	})
	if err != nil {
		return fmt.Errorf("set callback: %w", err)
	}
	return nil
}

// RemoveCallback implements ledger.CallbackStore.
func (s *Store) RemoveCallback(ctx context.Context, tenant string) error {
	err := s.withAction(ctx, ledger.ActionCallbackRemove, tenant, tenant, func(tx *sql.Tx, a *ledger.Action) error {
		var removed string
		err := tx.QueryRowContext(ctx, `DELETE FROM tenant_callbacks WHERE tenant_id = ? RETURNING url`, tenant).Scan(&removed)
		if errors.Is(err, sql.ErrNoRows) {
			return ledger.Errorf(ledger.ENotFound, "no callback configured for tenant %s", tenant)
		}
		if err != nil {
			return err
		}
		// The record names the endpoint that went, never its secret.
		a.Reason = ledger.CallbackActionURL(removed)
		_, err = tx.ExecContext(ctx, `DELETE FROM callback_outbox WHERE tenant_id = ? AND delivered_at IS NULL`, tenant)
		return err
	})
	if err != nil {
		return fmt.Errorf("remove callback: %w", err)
	}
	return nil
}

// GetCallback implements ledger.CallbackStore.
func (s *Store) GetCallback(ctx context.Context, tenant string) (ledger.Callback, error) {
	var created, updated int64
	c := ledger.Callback{Tenant: tenant}
	err := s.r.QueryRowContext(ctx, `SELECT url, secret, created_at, updated_at FROM tenant_callbacks
		WHERE tenant_id = ?`, tenant).Scan(&c.URL, &c.Secret, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return ledger.Callback{}, ledger.Errorf(ledger.ENotFound, "no callback configured for tenant %s", tenant)
	}
	if err != nil {
		return ledger.Callback{}, fmt.Errorf("get callback: %w", err)
	}
	c.CreatedAt, c.UpdatedAt = fromMicros(created), fromMicros(updated)
	return c, nil
}

const notificationCols = `callback_id, tenant_id, operation_id, state, fence_token, attempts,
	created_at, next_attempt_at, delivered_at, coalesce(last_status, 0), last_error, gave_up_at`

func collectNotifications(rows *sql.Rows, err error) ([]ledger.Notification, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ns []ledger.Notification
	for rows.Next() {
		var (
			n             ledger.Notification
			state         string
			created, next int64
			delivered     sql.NullInt64
			gaveUp        sql.NullInt64
		)
		err := rows.Scan(&n.ID, &n.Tenant, &n.OperationID, &state, &n.Fence, &n.Attempts,
			&created, &next, &delivered, &n.LastStatus, &n.LastError, &gaveUp)
		if err != nil {
			return nil, err
		}
		n.State, n.DeliveredAt, n.GaveUpAt = ledger.State(state), fromNull(delivered), fromNull(gaveUp)
		n.CreatedAt, n.NextAttemptAt = fromMicros(created), fromMicros(next)
		ns = append(ns, n)
	}
	return ns, rows.Err()
}

// ClaimNotifications implements ledger.CallbackStore. The single writer
// serialises claimers; due rows are ranked within their tenant and taken
// rank by rank, so one tenant's backlog does not hold up another's.
func (s *Store) ClaimNotifications(ctx context.Context, n int, lease time.Duration) ([]ledger.Notification, error) {
	if lease <= 0 || n <= 0 {
		return nil, ledger.Errorf(ledger.EInvalid, "batch size and lease must be positive")
	}
	now := s.clock()
	var ns []ledger.Notification
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		ns, err = collectNotifications(tx.QueryContext(ctx, `UPDATE callback_outbox
			SET attempts = attempts + 1, next_attempt_at = ?1
			WHERE callback_id IN (
				SELECT callback_id FROM (
					SELECT callback_id, next_attempt_at, row_number() OVER (
						PARTITION BY tenant_id ORDER BY next_attempt_at, callback_id) AS rank
					FROM callback_outbox
					WHERE delivered_at IS NULL AND gave_up_at IS NULL AND next_attempt_at <= ?2)
				ORDER BY rank, next_attempt_at LIMIT ?3)
			RETURNING `+notificationCols, micros(now.Add(lease)), micros(now), n))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim notifications: %w", err)
	}
	return ns, nil
}

// MarkDelivered implements ledger.CallbackStore.
func (s *Store) MarkDelivered(ctx context.Context, id int64, status int, now time.Time) error {
	if err := s.markDelivered(ctx, callbackOutbox, id, status, now); err != nil {
		return err
	}
	return s.NoteCallbackAttempt(ctx, ledger.CallbackAttempt{ID: id, At: now, Status: status, OK: true})
}

// MarkFailed implements ledger.CallbackStore.
func (s *Store) MarkFailed(ctx context.Context, id int64, status int, errText string, next time.Time) error {
	if err := s.markFailed(ctx, callbackOutbox, id, status, errText, next); err != nil {
		return err
	}
	return s.NoteCallbackAttempt(ctx, ledger.CallbackAttempt{ID: id, At: s.clock(), Status: status, Error: errText})
}

// outbox names a table of queued deliveries (client callbacks, escalation
// notices) that share the columns of delivery: delivered_at,
// next_attempt_at, last_status and last_error. The names are constants,
// never input, so they can be written into the SQL.
type outbox struct {
	table, id, what, cols string
	retry                 ledger.ActionKind // the action that queues given-up rows again
}

var (
	callbackOutbox   = outbox{"callback_outbox", "callback_id", "notification", notificationCols, ledger.ActionCallbackRetry}
	escalationOutbox = outbox{"escalation_outbox", "notice_id", "escalation notice", noticeCols, ledger.ActionEscalationNoticeRetry}
)

// markDelivered records the acknowledgement of one delivery; a repeated
// acknowledgement keeps the first time.
func (s *Store) markDelivered(ctx context.Context, o outbox, id int64, status int, now time.Time) error {
	res, err := s.w.ExecContext(ctx, `UPDATE `+o.table+` SET delivered_at = coalesce(delivered_at, ?2),
		last_status = ?3, last_error = '' WHERE `+o.id+` = ?1`, id, micros(now), status)
	if err != nil {
		return fmt.Errorf("mark %s delivered: %w", o.what, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ledger.Errorf(ledger.ENotFound, "%s not found", o.what)
	}
	return nil
}

// markFailed schedules the next attempt of one delivery. A delivered row is
// left alone: a late failure report from a sender whose lease ran out must
// not undo another's acknowledgement.
func (s *Store) markFailed(ctx context.Context, o outbox, id int64, status int, errText string, next time.Time) error {
	var found bool
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE `+o.table+` SET next_attempt_at = ?2,
			last_status = nullif(?3, 0), last_error = ?4 WHERE `+o.id+` = ?1 AND delivered_at IS NULL`,
			id, micros(next), status, ledger.TrimCallbackError(errText))
		if err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM `+o.table+` WHERE `+o.id+` = ?)`, id).Scan(&found)
	})
	if err != nil {
		return fmt.Errorf("mark %s failed: %w", o.what, err)
	}
	if !found {
		return ledger.Errorf(ledger.ENotFound, "%s not found", o.what)
	}
	return nil
}

// GiveUpNotification implements ledger.CallbackStore.
func (s *Store) GiveUpNotification(ctx context.Context, id int64, status int, errText string, now time.Time) error {
	if err := s.giveUp(ctx, callbackOutbox, id, status, errText, now); err != nil {
		return err
	}
	return s.NoteCallbackAttempt(ctx, ledger.CallbackAttempt{ID: id, At: now, Status: status, Error: errText})
}

// GivenUpNotifications implements ledger.CallbackStore.
func (s *Store) GivenUpNotifications(ctx context.Context, tenant string, limit int) (ledger.GivenUp, error) {
	return s.givenUp(ctx, callbackOutbox, tenant, limit)
}

// RetryGivenUp implements ledger.CallbackStore.
func (s *Store) RetryGivenUp(ctx context.Context, tenant string, now time.Time) (int, error) {
	return s.retryGivenUp(ctx, callbackOutbox, tenant, now)
}

// giveUp records the last failed attempt of one delivery and stops its
// retries. Like markFailed it leaves a delivered row alone.
func (s *Store) giveUp(ctx context.Context, o outbox, id int64, status int, errText string, now time.Time) error {
	var found bool
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE `+o.table+` SET gave_up_at = coalesce(gave_up_at, ?2),
			last_status = nullif(?3, 0), last_error = ?4 WHERE `+o.id+` = ?1 AND delivered_at IS NULL`,
			id, micros(now), status, ledger.TrimCallbackError(errText))
		if err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM `+o.table+` WHERE `+o.id+` = ?)`, id).Scan(&found)
	})
	if err != nil {
		return fmt.Errorf("give up %s: %w", o.what, err)
	}
	if !found {
		return ledger.Errorf(ledger.ENotFound, "%s not found", o.what)
	}
	return nil
}

// givenUp counts a tenant's given-up deliveries and reads the latest limit.
func (s *Store) givenUp(ctx context.Context, o outbox, tenant string, limit int) (ledger.GivenUp, error) {
	var g ledger.GivenUp
	err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM `+o.table+`
		WHERE tenant_id = ? AND gave_up_at IS NOT NULL AND delivered_at IS NULL`, tenant).Scan(&g.Count)
	if err != nil {
		return g, fmt.Errorf("given-up %ss: %w", o.what, err)
	}
	if g.Count == 0 || limit <= 0 {
		return g, nil
	}
	g.Latest, err = collectNotifications(s.r.QueryContext(ctx, `SELECT `+o.cols+` FROM `+o.table+`
		WHERE tenant_id = ? AND gave_up_at IS NOT NULL AND delivered_at IS NULL
		ORDER BY gave_up_at DESC, `+o.id+` DESC LIMIT ?`, tenant, limit))
	if err != nil {
		return g, fmt.Errorf("given-up %ss: %w", o.what, err)
	}
	return g, nil
}

// retryGivenUp makes a tenant's given-up deliveries due at now, their
// attempts counted from zero again, and records o.retry by the context's
// actor with how many (EInvalid without an actor).
func (s *Store) retryGivenUp(ctx context.Context, o outbox, tenant string, now time.Time) (int, error) {
	var n int64
	err := s.withAction(ctx, o.retry, tenant, tenant, func(tx *sql.Tx, a *ledger.Action) error {
		res, err := tx.ExecContext(ctx, `UPDATE `+o.table+` SET gave_up_at = NULL, attempts = 0, next_attempt_at = ?2
			WHERE tenant_id = ?1 AND gave_up_at IS NOT NULL AND delivered_at IS NULL`, tenant, micros(now))
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		a.Reason = fmt.Sprintf("%d queued again", n)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("retry given-up %ss: %w", o.what, err)
	}
	return int(n), nil
}

// Notifications implements ledger.CallbackStore.
func (s *Store) Notifications(ctx context.Context, tenant, operationID string) ([]ledger.Notification, error) {
	ns, err := collectNotifications(s.r.QueryContext(ctx, `SELECT `+notificationCols+` FROM callback_outbox
		WHERE tenant_id = ? AND operation_id = ? ORDER BY callback_id`, tenant, operationID))
	if err != nil {
		return nil, fmt.Errorf("notifications: %w", err)
	}
	return ns, nil
}

// CallbackAttemptRecord implements ledger.CallbackDriver.
func (d driver) CallbackAttemptRecord(ctx context.Context, p ledger.CallbackAttempt) error {
	return d.w.CallbackAttemptRecord(ctx, callbackAttemptParams(p))
}

func callbackAttemptParams(p ledger.CallbackAttempt) dbsqlc.CallbackAttemptRecordParams {
	ok := int64(0)
	if p.OK {
		ok = 1
	}
	return dbsqlc.CallbackAttemptRecordParams{CallbackID: p.ID, At: micros(p.At), Status: int64(p.Status),
		Error: ledger.TrimCallbackError(p.Error), Ok: ok}
}

// CallbackDeliveryGet implements ledger.CallbackDriver.
func (d driver) CallbackDeliveryGet(ctx context.Context, tenant string, maxPending int) (ledger.CallbackDelivery, bool, error) {
	r, err := d.r.CallbackDeliveryGet(ctx, dbsqlc.CallbackDeliveryGetParams{Tenant: tenant, MaxPending: int64(maxPending)})
	if errors.Is(err, sql.ErrNoRows) {
		return ledger.CallbackDelivery{}, false, nil
	}
	return ledger.CallbackDelivery{LastAttemptAt: nullTime(r.LastAttemptAt), LastStatus: int(r.LastAttemptStatus),
		LastError: r.LastAttemptError, LastSuccessAt: nullTime(r.LastSuccessAt),
		FailuresSinceSuccess: int(r.FailuresSinceSuccess), Pending: int(r.Pending)}, err == nil, err
}

// nullTime reads an optional INTEGER microseconds column.
func nullTime(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMicros(v.Int64)
	return &t
}
