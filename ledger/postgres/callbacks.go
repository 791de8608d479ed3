package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"settle/ledger"
	"settle/ledger/postgres/internal/dbsqlc"
)

var _ ledger.CallbackStore = (*Store)(nil)

// callbackCTE queues, in the statement that records a transition, one
// notification for each row of u that reached a state the tenant is told
// about, when the tenant has a callback. Being part of that statement is the
// point: the transition and its notification commit, or fail, together.
// ON CONFLICT keeps it to one notification per state reached. The esc
// part queues the owning team's notice of every escalation, callback or
// not (escalations.go). The
// parameter named by param holds ledger.CallbackStates (see callbackStates).
func callbackCTE(param string) string {
	return `cb AS (
	INSERT INTO callback_outbox (tenant_id, operation_id, state, fence_token, created_at, next_attempt_at)
	SELECT u.tenant_id, u.operation_id::uuid, u.state, u.fence_token, u.updated_at, u.updated_at
	FROM u JOIN tenant_callbacks c ON c.tenant_id = u.tenant_id
	WHERE u.state = ANY(` + param + `::text[])
	ON CONFLICT (tenant_id, operation_id, state) DO NOTHING
), esc AS (
	INSERT INTO escalation_outbox (tenant_id, operation_id, fence_token, created_at, next_attempt_at)
	SELECT u.tenant_id, u.operation_id::uuid, u.fence_token, u.updated_at, u.updated_at
	FROM u WHERE u.state = 'ESCALATED'
	ON CONFLICT (tenant_id, operation_id, fence_token) DO NOTHING
)`
}

// callbackStates is ledger.CallbackStates as a text array parameter.
func callbackStates() []string {
	var out []string
	for _, s := range ledger.CallbackStates() {
		out = append(out, string(s))
	}
	return out
}

// SetCallback implements ledger.CallbackStore.
func (s *Store) SetCallback(ctx context.Context, tenant, url string, secret []byte, now time.Time) error {
	if err := ledger.ValidateCallback(tenant, url, secret); err != nil {
		return err
	}
	now = now.UTC().Truncate(time.Microsecond)
	err := s.withAction(ctx, ledger.ActionCallbackSet, tenant, tenant, func(tx pgx.Tx, a *ledger.Action) error {
		a.Reason = ledger.CallbackActionURL(url)
		_, err := tx.Exec(ctx, `INSERT INTO tenant_callbacks (tenant_id, url, secret, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $4)
			ON CONFLICT (tenant_id) DO UPDATE SET url = excluded.url, secret = excluded.secret,
				updated_at = excluded.updated_at, last_attempt_at = NULL, last_attempt_status = 0,
				last_attempt_error = '', last_success_at = NULL, failures_since_success = 0`, tenant, url, secret, now)
		return err
	})
	if err != nil {
		return fmt.Errorf("set callback: %w", err)
	}
	return nil
}

// RemoveCallback implements ledger.CallbackStore.
func (s *Store) RemoveCallback(ctx context.Context, tenant string) error {
	err := s.withAction(ctx, ledger.ActionCallbackRemove, tenant, tenant, func(tx pgx.Tx, a *ledger.Action) error {
		var n int
		var removed string
		err := tx.QueryRow(ctx, `
WITH d AS (DELETE FROM tenant_callbacks WHERE tenant_id = $1 RETURNING url),
	p AS (DELETE FROM callback_outbox WHERE tenant_id = $1 AND delivered_at IS NULL)
SELECT count(*), coalesce(min(url), '') FROM d`, tenant).Scan(&n, &removed)
		if err == nil && n == 0 {
			return ledger.Errorf(ledger.ENotFound, "no callback configured for tenant %s", tenant)
		}
		// The record names the endpoint that went, never its secret.
		a.Reason = ledger.CallbackActionURL(removed)
		return err
	})
	if err != nil {
		return fmt.Errorf("remove callback: %w", err)
	}
	return nil
}

// GetCallback implements ledger.CallbackStore.
func (s *Store) GetCallback(ctx context.Context, tenant string) (ledger.Callback, error) {
	c := ledger.Callback{Tenant: tenant}
	err := s.pool.QueryRow(ctx, `SELECT url, secret, created_at, updated_at FROM tenant_callbacks
		WHERE tenant_id = $1`, tenant).Scan(&c.URL, &c.Secret, &c.CreatedAt, &c.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return ledger.Callback{}, ledger.Errorf(ledger.ENotFound, "no callback configured for tenant %s", tenant)
	}
	if err != nil {
		return ledger.Callback{}, fmt.Errorf("get callback: %w", err)
	}
	utc(&c.CreatedAt)
	utc(&c.UpdatedAt)
	return c, nil
}

// notificationCols are the callback_outbox columns in scan order; the
// claim's RETURNING needs them qualified.
const notificationCols = `callback_id, tenant_id, operation_id::text, state, fence_token, attempts,
	created_at, next_attempt_at, delivered_at, coalesce(last_status, 0), last_error, gave_up_at`

const cNotificationCols = `c.callback_id, c.tenant_id, c.operation_id::text, c.state, c.fence_token,
	c.attempts, c.created_at, c.next_attempt_at, c.delivered_at, coalesce(c.last_status, 0), c.last_error, c.gave_up_at`

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

// ClaimNotifications implements ledger.CallbackStore. Fairness: each tenant
// with a callback offers at most n of its due rows, which are taken rank by
// rank, so one tenant's dead endpoint with a large backlog does not hold up
// another tenant's few. The cost follows the number of tenants with a
// callback, not the backlog. SKIP LOCKED lets concurrent claimers in other
// replicas pass over rows being claimed; the due re-check makes a row just
// claimed by another invisible.
func (s *Store) ClaimNotifications(ctx context.Context, n int, lease time.Duration) ([]ledger.Notification, error) {
	if lease <= 0 || n <= 0 {
		return nil, ledger.Errorf(ledger.EInvalid, "batch size and lease must be positive")
	}
	now := s.clock()
	rows, err := s.pool.Query(ctx, `
WITH due AS (
	SELECT o.callback_id, o.next_attempt_at,
		row_number() OVER (PARTITION BY t.tenant_id ORDER BY o.next_attempt_at, o.callback_id) AS rank
	FROM tenant_callbacks t CROSS JOIN LATERAL (
		SELECT callback_id, next_attempt_at FROM callback_outbox
		WHERE tenant_id = t.tenant_id AND delivered_at IS NULL AND gave_up_at IS NULL
			AND next_attempt_at <= $1
		ORDER BY next_attempt_at LIMIT $2) o
), picked AS (
	SELECT callback_id FROM callback_outbox
	WHERE callback_id IN (SELECT callback_id FROM due ORDER BY rank, next_attempt_at LIMIT $2)
		AND delivered_at IS NULL AND gave_up_at IS NULL AND next_attempt_at <= $1
	FOR UPDATE SKIP LOCKED
)
UPDATE callback_outbox c SET attempts = c.attempts + 1, next_attempt_at = $3
FROM picked p WHERE c.callback_id = p.callback_id
RETURNING `+cNotificationCols, now, n, now.Add(lease))
	if err != nil {
		return nil, fmt.Errorf("claim notifications: %w", err)
	}
	ns, err := pgx.CollectRows(rows, scanNotification)
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

// Notifications implements ledger.CallbackStore.
func (s *Store) Notifications(ctx context.Context, tenant, operationID string) ([]ledger.Notification, error) {
	if uuid.Validate(operationID) != nil {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT `+notificationCols+` FROM callback_outbox
		WHERE tenant_id = $1 AND operation_id = $2 ORDER BY callback_id`, tenant, operationID)
	if err != nil {
		return nil, fmt.Errorf("notifications: %w", err)
	}
	ns, err := pgx.CollectRows(rows, scanNotification)
	if err != nil {
		return nil, fmt.Errorf("notifications: %w", err)
	}
	return ns, nil
}

// CallbackAttemptRecord implements ledger.CallbackDriver.
func (d driver) CallbackAttemptRecord(ctx context.Context, p ledger.CallbackAttempt) error {
	return d.q.CallbackAttemptRecord(ctx, callbackAttemptParams(p))
}

func callbackAttemptParams(p ledger.CallbackAttempt) dbsqlc.CallbackAttemptRecordParams {
	return dbsqlc.CallbackAttemptRecordParams{CallbackID: p.ID, At: p.At.UTC().Truncate(time.Microsecond),
		Status: int32(p.Status), Error: ledger.TrimCallbackError(p.Error), Ok: p.OK}
}

// CallbackDeliveryGet implements ledger.CallbackDriver.
func (d driver) CallbackDeliveryGet(ctx context.Context, tenant string, maxPending int) (ledger.CallbackDelivery, bool, error) {
	r, err := d.q.CallbackDeliveryGet(ctx, dbsqlc.CallbackDeliveryGetParams{Tenant: tenant, MaxPending: int32(maxPending)})
	if errors.Is(err, pgx.ErrNoRows) {
		return ledger.CallbackDelivery{}, false, nil
	}
	utcp(r.LastAttemptAt)
	utcp(r.LastSuccessAt)
	return ledger.CallbackDelivery{LastAttemptAt: r.LastAttemptAt, LastStatus: int(r.LastAttemptStatus),
		LastError: r.LastAttemptError, LastSuccessAt: r.LastSuccessAt,
		FailuresSinceSuccess: int(r.FailuresSinceSuccess), Pending: int(r.Pending)}, err == nil, err
}
