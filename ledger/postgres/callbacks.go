package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

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

// CallbackUpsert implements ledger.CallbackDriver.
func (d driver) CallbackUpsert(ctx context.Context, p ledger.CallbackUpsertParams) error {
	return d.q.CallbackUpsert(ctx, dbsqlc.CallbackUpsertParams{Tenant: p.Tenant, Url: p.URL, Secret: p.Secret, At: p.At})
}

// CallbackDelete implements ledger.CallbackDriver in one statement.
func (d driver) CallbackDelete(ctx context.Context, tenant string) (string, bool, error) {
	r, err := d.q.CallbackDelete(ctx, tenant)
	return r.Url, r.Removed > 0, err
}

// CallbackGet implements ledger.CallbackDriver.
func (d driver) CallbackGet(ctx context.Context, tenant string) (ledger.Callback, bool, error) {
	r, err := d.q.CallbackGet(ctx, tenant)
	if errors.Is(err, pgx.ErrNoRows) {
		return ledger.Callback{}, false, nil
	}
	return ledger.Callback{Tenant: tenant, URL: r.Url, Secret: r.Secret, CreatedAt: r.CreatedAt.UTC(),
		UpdatedAt: r.UpdatedAt.UTC()}, err == nil, err
}

// OutboxClaim implements ledger.NoticeDriver with FOR UPDATE SKIP LOCKED.
func (d driver) OutboxClaim(ctx context.Context, p ledger.OutboxClaimParams) ([]ledger.Notification, error) {
	switch p.Outbox {
	case ledger.OutboxCallbacks:
		rows, err := d.q.NotificationClaim(ctx, dbsqlc.NotificationClaimParams{Now: p.Now, Max: int32(p.Max),
			LeaseUntil: p.LeaseUntil})
		return notifications(rows, err)
	case ledger.OutboxEscalations:
		rows, err := d.q.EscalationNoticeClaim(ctx, dbsqlc.EscalationNoticeClaimParams{Now: p.Now, Max: int32(p.Max),
			LeaseUntil: p.LeaseUntil})
		return notices(rows, err)
	}
	return nil, unknownOutbox(p.Outbox)
}

// OutboxDelivered implements ledger.NoticeDriver.
func (d driver) OutboxDelivered(ctx context.Context, p ledger.OutboxMarkParams) (bool, error) {
	switch p.Outbox {
	case ledger.OutboxCallbacks:
		n, err := d.q.NotificationDelivered(ctx, dbsqlc.NotificationDeliveredParams{ID: p.ID, At: p.At,
			Status: int32(p.Status)})
		return n > 0, err
	case ledger.OutboxEscalations:
		n, err := d.q.EscalationNoticeDelivered(ctx, dbsqlc.EscalationNoticeDeliveredParams{ID: p.ID, At: p.At,
			Status: int32(p.Status)})
		return n > 0, err
	}
	return false, unknownOutbox(p.Outbox)
}

// OutboxFailed implements ledger.NoticeDriver in one statement.
func (d driver) OutboxFailed(ctx context.Context, p ledger.OutboxMarkParams) (bool, error) {
	switch p.Outbox {
	case ledger.OutboxCallbacks:
		return d.q.NotificationFailed(ctx, dbsqlc.NotificationFailedParams{ID: p.ID, Next: p.At,
			Status: int32(p.Status), Error: p.Error})
	case ledger.OutboxEscalations:
		return d.q.EscalationNoticeFailed(ctx, dbsqlc.EscalationNoticeFailedParams{ID: p.ID, Next: p.At,
			Status: int32(p.Status), Error: p.Error})
	}
	return false, unknownOutbox(p.Outbox)
}

// OutboxGiveUp implements ledger.NoticeDriver in one statement.
func (d driver) OutboxGiveUp(ctx context.Context, p ledger.OutboxMarkParams) (bool, error) {
	switch p.Outbox {
	case ledger.OutboxCallbacks:
		return d.q.NotificationGiveUp(ctx, dbsqlc.NotificationGiveUpParams{ID: p.ID, At: p.At,
			Status: int32(p.Status), Error: p.Error})
	case ledger.OutboxEscalations:
		return d.q.EscalationNoticeGiveUp(ctx, dbsqlc.EscalationNoticeGiveUpParams{ID: p.ID, At: p.At,
			Status: int32(p.Status), Error: p.Error})
	}
	return false, unknownOutbox(p.Outbox)
}

// OutboxGivenUpCount implements ledger.NoticeDriver.
func (d driver) OutboxGivenUpCount(ctx context.Context, o ledger.Outbox, tenant string) (int, error) {
	switch o {
	case ledger.OutboxCallbacks:
		n, err := d.q.NotificationGivenUpCount(ctx, tenant)
		return int(n), err
	case ledger.OutboxEscalations:
		n, err := d.q.EscalationNoticeGivenUpCount(ctx, tenant)
		return int(n), err
	}
	return 0, unknownOutbox(o)
}

// OutboxGivenUpList implements ledger.NoticeDriver.
func (d driver) OutboxGivenUpList(ctx context.Context, o ledger.Outbox, tenant string, max int) ([]ledger.Notification, error) {
	switch o {
	case ledger.OutboxCallbacks:
		rows, err := d.q.NotificationGivenUpList(ctx, dbsqlc.NotificationGivenUpListParams{Tenant: tenant, Max: int32(max)})
		return notifications(rows, err)
	case ledger.OutboxEscalations:
		rows, err := d.q.EscalationNoticeGivenUpList(ctx, dbsqlc.EscalationNoticeGivenUpListParams{Tenant: tenant,
			Max: int32(max)})
		return notices(rows, err)
	}
	return nil, unknownOutbox(o)
}

// OutboxRetry implements ledger.NoticeDriver.
func (d driver) OutboxRetry(ctx context.Context, o ledger.Outbox, tenant string, at time.Time) (int, error) {
	switch o {
	case ledger.OutboxCallbacks:
		n, err := d.q.NotificationRetry(ctx, dbsqlc.NotificationRetryParams{Tenant: tenant, At: at})
		return int(n), err
	case ledger.OutboxEscalations:
		n, err := d.q.EscalationNoticeRetry(ctx, dbsqlc.EscalationNoticeRetryParams{Tenant: tenant, At: at})
		return int(n), err
	}
	return 0, unknownOutbox(o)
}

// OutboxList implements ledger.NoticeDriver.
func (d driver) OutboxList(ctx context.Context, o ledger.Outbox, tenant, operationID string) ([]ledger.Notification, error) {
	switch o {
	case ledger.OutboxCallbacks:
		rows, err := d.q.NotificationList(ctx, dbsqlc.NotificationListParams{Tenant: tenant, OperationID: operationID})
		return notifications(rows, err)
	case ledger.OutboxEscalations:
		rows, err := d.q.EscalationNoticeList(ctx, dbsqlc.EscalationNoticeListParams{Tenant: tenant,
			OperationID: operationID})
		return notices(rows, err)
	}
	return nil, unknownOutbox(o)
}

func unknownOutbox(o ledger.Outbox) error { return fmt.Errorf("unknown outbox %d", o) }

// notifications converts rows of callback_outbox.
func notifications(rows []dbsqlc.CallbackOutbox, err error) ([]ledger.Notification, error) {
	if err != nil {
		return nil, err
	}
	out := make([]ledger.Notification, len(rows))
	for i, r := range rows {
		out[i] = notification(r.CallbackID, r.TenantID, r.OperationID, ledger.State(r.State), r.FenceToken,
			r.Attempts, r.CreatedAt, r.NextAttemptAt, r.DeliveredAt, r.LastStatus, r.LastError, r.GaveUpAt)
	}
	return out, nil
}

// notification is a row of an outbox (the queues share their columns of
// delivery).
func notification(id int64, tenant string, op pgtype.UUID, state ledger.State, fence int64, attempts int32,
	created, next time.Time, delivered *time.Time, status pgtype.Int4, lastErr string, gaveUp *time.Time) ledger.Notification {
	n := ledger.Notification{ID: id, Tenant: tenant, OperationID: uuid.UUID(op.Bytes).String(), State: state,
		Fence: fence, Attempts: int(attempts), CreatedAt: created.UTC(), NextAttemptAt: next.UTC(),
		DeliveredAt: delivered, LastStatus: int(status.Int32), LastError: lastErr, GaveUpAt: gaveUp}
	utcp(n.DeliveredAt)
	utcp(n.GaveUpAt)
	return n
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
