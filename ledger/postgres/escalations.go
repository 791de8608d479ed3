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

func scanNotification(row pgx.CollectableRow) (ledger.Notification, error) {
	var (
		n     ledger.Notification
		state string
	)
	err := row.Scan(&n.ID, &n.Tenant, &n.OperationID, &state, &n.Fence, &n.Attempts,
		&n.CreatedAt, &n.NextAttemptAt, &n.DeliveredAt, &n.LastStatus, &n.LastError, &n.GaveUpAt)
	n.State = ledger.State(state)
	utc(&n.CreatedAt)
	utc(&n.NextAttemptAt)
	utcp(n.DeliveredAt)
	utcp(n.GaveUpAt)
	return n, err
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
	tag, err := s.pool.Exec(ctx, `UPDATE `+o.table+` SET delivered_at = coalesce(delivered_at, $2),
		last_status = $3, last_error = '' WHERE `+o.id+` = $1`, id, now.UTC().Truncate(time.Microsecond), status)
	if err != nil {
		return fmt.Errorf("mark %s delivered: %w", o.what, err)
	}
	if tag.RowsAffected() == 0 {
		return ledger.Errorf(ledger.ENotFound, "%s not found", o.what)
	}
	return nil
}

// markFailed schedules the next attempt of one delivery. A delivered row is
// left alone: a late failure report from a sender whose lease ran out must
// not undo another's acknowledgement.
func (s *Store) markFailed(ctx context.Context, o outbox, id int64, status int, errText string, next time.Time) error {
	var found bool
	err := s.pool.QueryRow(ctx, `
WITH u AS (
	UPDATE `+o.table+` SET next_attempt_at = $2, last_status = nullif($3, 0), last_error = $4
	WHERE `+o.id+` = $1 AND delivered_at IS NULL
)
SELECT EXISTS (SELECT 1 FROM `+o.table+` WHERE `+o.id+` = $1)`,
		id, next.UTC().Truncate(time.Microsecond), status, ledger.TrimCallbackError(errText)).Scan(&found)
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
	err := s.pool.QueryRow(ctx, `
WITH u AS (
	UPDATE `+o.table+` SET gave_up_at = coalesce(gave_up_at, $2), last_status = nullif($3, 0), last_error = $4
	WHERE `+o.id+` = $1 AND delivered_at IS NULL
)
SELECT EXISTS (SELECT 1 FROM `+o.table+` WHERE `+o.id+` = $1)`,
		id, now.UTC().Truncate(time.Microsecond), status, ledger.TrimCallbackError(errText)).Scan(&found)
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
	what := "given-up " + o.what + "s"
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM `+o.table+`
		WHERE tenant_id = $1 AND gave_up_at IS NOT NULL AND delivered_at IS NULL`, tenant).Scan(&g.Count)
	if err != nil || g.Count == 0 || limit <= 0 {
		return g, wrap(what, err)
	}
	rows, err := s.pool.Query(ctx, `SELECT `+o.cols+` FROM `+o.table+`
		WHERE tenant_id = $1 AND gave_up_at IS NOT NULL AND delivered_at IS NULL
		ORDER BY gave_up_at DESC, `+o.id+` DESC LIMIT $2`, tenant, limit)
	if err != nil {
		return g, fmt.Errorf("%s: %w", what, err)
	}
	g.Latest, err = pgx.CollectRows(rows, scanNotification)
	return g, wrap(what, err)
}

// retryGivenUp makes a tenant's given-up deliveries due at now, their
// attempts counted from zero again, and records o.retry by the context's
// actor with how many (EInvalid without an actor).
func (s *Store) retryGivenUp(ctx context.Context, o outbox, tenant string, now time.Time) (int, error) {
	var n int
	err := s.withAction(ctx, o.retry, tenant, tenant, func(tx pgx.Tx, a *ledger.Action) error {
		tag, err := tx.Exec(ctx, `UPDATE `+o.table+` SET gave_up_at = NULL, attempts = 0, next_attempt_at = $2
			WHERE tenant_id = $1 AND gave_up_at IS NOT NULL AND delivered_at IS NULL`,
			tenant, now.UTC().Truncate(time.Microsecond))
		n = int(tag.RowsAffected())
		a.Reason = fmt.Sprintf("%d queued again", n)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("retry given-up %ss: %w", o.what, err)
	}
	return n, nil
}

// wrap prefixes a non-nil error with what failed.
func wrap(what string, err error) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}
