package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"settle/ledger"
)

var _ ledger.EscalationStore = (*Store)(nil)

// noticeCols reads escalation_outbox as scanNotification expects.
const noticeCols = `notice_id, tenant_id, operation_id::text, 'ESCALATED', fence_token,
	attempts, created_at, next_attempt_at, delivered_at, coalesce(last_status, 0), last_error, gave_up_at`

// ClaimEscalationNotices implements ledger.EscalationStore. SKIP LOCKED
// keeps concurrent claimers apart.
func (s *Store) ClaimEscalationNotices(ctx context.Context, n int, lease time.Duration) ([]ledger.Notification, error) {
	if lease <= 0 || n <= 0 {
		return nil, ledger.Errorf(ledger.EInvalid, "batch size and lease must be positive")
	}
	now := s.clock()
	rows, err := s.pool.Query(ctx, `
WITH picked AS (
	SELECT notice_id FROM escalation_outbox
	WHERE delivered_at IS NULL AND gave_up_at IS NULL AND next_attempt_at <= $1
	ORDER BY next_attempt_at, notice_id LIMIT $2
	FOR UPDATE SKIP LOCKED
)
UPDATE escalation_outbox e SET attempts = e.attempts + 1, next_attempt_at = $3
FROM picked p WHERE e.notice_id = p.notice_id
RETURNING e.`+noticeCols, now, n, now.Add(lease))
	if err != nil {
		return nil, fmt.Errorf("claim escalation notices: %w", err)
	}
	ns, err := pgx.CollectRows(rows, scanNotification)
	if err != nil {
		return nil, fmt.Errorf("claim escalation notices: %w", err)
	}
	return ns, nil
}

// MarkEscalationNoticeDelivered implements ledger.EscalationStore.
func (s *Store) MarkEscalationNoticeDelivered(ctx context.Context, id int64, status int, now time.Time) error {
	return s.markDelivered(ctx, escalationOutbox, id, status, now)
}

// MarkEscalationNoticeFailed implements ledger.EscalationStore. A delivered
// notice is left alone.
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
	if uuid.Validate(operationID) != nil {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT `+noticeCols+` FROM escalation_outbox
		WHERE tenant_id = $1 AND operation_id = $2 ORDER BY notice_id`, tenant, operationID)
	if err != nil {
		return nil, fmt.Errorf("escalation notices: %w", err)
	}
	ns, err := pgx.CollectRows(rows, scanNotification)
	if err != nil {
		return nil, fmt.Errorf("escalation notices: %w", err)
	}
	return ns, nil
}

// DigestSent implements ledger.EscalationStore.
func (s *Store) DigestSent(ctx context.Context, team, day string) (bool, error) {
	d, err := time.Parse(time.DateOnly, day)
	if err != nil {
		return false, ledger.Errorf(ledger.EInvalid, "a digest day is YYYY-MM-DD")
	}
	var sent bool
	err = s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM escalation_digests WHERE team = $1 AND day = $2)`,
		team, d).Scan(&sent)
	if err != nil {
		return false, fmt.Errorf("digest sent: %w", err)
	}
	return sent, nil
}

// RecordDigest implements ledger.EscalationStore.
func (s *Store) RecordDigest(ctx context.Context, team, day string, now time.Time) error {
	d, err := time.Parse(time.DateOnly, day)
	if err != nil || team == "" {
		return ledger.Errorf(ledger.EInvalid, "a digest needs a team and a YYYY-MM-DD day")
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO escalation_digests (team, day, sent_at) VALUES ($1, $2, $3)
		ON CONFLICT (team, day) DO NOTHING`, team, d, now.UTC().Truncate(time.Microsecond))
	if err != nil {
		return fmt.Errorf("record digest: %w", err)
	}
	return nil
}
