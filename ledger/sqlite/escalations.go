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
