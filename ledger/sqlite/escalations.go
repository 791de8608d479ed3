package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"settle/ledger"
)

var _ ledger.EscalationStore = (*Store)(nil)

// noticeCols reads escalation_outbox as collectNotifications expects.
const noticeCols = `notice_id, tenant_id, operation_id, 'ESCALATED', fence_token, attempts,
	created_at, next_attempt_at, delivered_at, coalesce(last_status, 0), last_error, gave_up_at`

// ClaimEscalationNotices implements ledger.EscalationStore. The single
// writer serialises claimers.
func (s *Store) ClaimEscalationNotices(ctx context.Context, n int, lease time.Duration) ([]ledger.Notification, error) {
	if lease <= 0 || n <= 0 {
		return nil, ledger.Errorf(ledger.EInvalid, "batch size and lease must be positive")
	}
	now := s.clock()
	var ns []ledger.Notification
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		ns, err = collectNotifications(tx.QueryContext(ctx, `UPDATE escalation_outbox
			SET attempts = attempts + 1, next_attempt_at = ?1
			WHERE notice_id IN (SELECT notice_id FROM escalation_outbox
				WHERE delivered_at IS NULL AND gave_up_at IS NULL AND next_attempt_at <= ?2
				ORDER BY next_attempt_at, notice_id LIMIT ?3)
			RETURNING `+noticeCols, micros(now.Add(lease)), micros(now), n))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim escalation notices: %w", err)
	}
	return ns, nil
}

// MarkEscalationNoticeDelivered implements ledger.EscalationStore.
func (s *Store) MarkEscalationNoticeDelivered(ctx context.Context, id int64, status int, now time.Time) error {
	return s.markDelivered(ctx, escalationOutbox, id, status, now)
}

// MarkEscalationNoticeFailed implements ledger.EscalationStore.
func (s *Store) MarkEscalationNoticeFailed(ctx context.Context, id int64, status int, errText string, next time.Time) error {
	return s.markFailed(ctx, escalationOutbox, id, status, errText, next)
}

// GiveUpEscalationNotice implements ledger.EscalationStore.
func (s *Store) GiveUpEscalationNotice(ctx context.Context, id int64, status int, errText string, now time.Time) error {
	return s.giveUp(ctx, escalationOutbox, id, status, errText, now)
}

// GivenUpEscalationNotices implements ledger.EscalationStore.
func (s *Store) GivenUpEscalationNotices(ctx context.Context, tenant string, limit int) (ledger.GivenUp, error) {
	return s.givenUp(ctx, escalationOutbox, tenant, limit)
}

// RetryGivenUpEscalationNotices implements ledger.EscalationStore.
func (s *Store) RetryGivenUpEscalationNotices(ctx context.Context, tenant string, now time.Time) (int, error) {
	return s.retryGivenUp(ctx, escalationOutbox, tenant, now)
}

// EscalationNotices implements ledger.EscalationStore.
func (s *Store) EscalationNotices(ctx context.Context, tenant, operationID string) ([]ledger.Notification, error) {
	ns, err := collectNotifications(s.r.QueryContext(ctx, `SELECT `+noticeCols+` FROM escalation_outbox
		WHERE tenant_id = ? AND operation_id = ? ORDER BY notice_id`, tenant, operationID))
	if err != nil {
		return nil, fmt.Errorf("escalation notices: %w", err)
	}
	return ns, nil
}

// DigestSent implements ledger.EscalationStore.
func (s *Store) DigestSent(ctx context.Context, team, day string) (bool, error) {
	var sent bool
	err := s.r.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM escalation_digests
		WHERE team = ? AND day = ?)`, team, day).Scan(&sent)
	if err != nil {
		return false, fmt.Errorf("digest sent: %w", err)
	}
	return sent, nil
}

// RecordDigest implements ledger.EscalationStore.
func (s *Store) RecordDigest(ctx context.Context, team, day string, now time.Time) error {
	if _, err := time.Parse(time.DateOnly, day); err != nil || team == "" {
		return ledger.Errorf(ledger.EInvalid, "a digest needs a team and a YYYY-MM-DD day")
	}
	_, err := s.w.ExecContext(ctx, `INSERT INTO escalation_digests (team, day, sent_at) VALUES (?, ?, ?)
		ON CONFLICT (team, day) DO NOTHING`, team, day, micros(now))
	if err != nil {
		return fmt.Errorf("record digest: %w", err)
	}
	return nil
}

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

// outbox names a table of queued deliveries (client callbacks, escalation
// notices) that share the columns of delivery: delivered_at,
// next_attempt_at, last_status and last_error. The names are constants,
// never input, so they can be written into the SQL.
type outbox struct {
	table, id, what, cols string
	retry                 ledger.ActionKind // the action that queues given-up rows again
}

var escalationOutbox = outbox{"escalation_outbox", "notice_id", "escalation notice", noticeCols, ledger.ActionEscalationNoticeRetry}

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
