package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"settle/ledger"
	"settle/ledger/postgres/internal/dbsqlc"
)

var _ ledger.EscalationStore = (*Store)(nil)

// OutboxClaim implements ledger.NoticeDriver with FOR UPDATE SKIP LOCKED.
func (d driver) OutboxClaim(ctx context.Context, p ledger.OutboxClaimParams) ([]ledger.Notification, error) {
	switch p.Outbox {
	case ledger.OutboxCallbacks:
		rows, err := d.q.NotificationClaim(ctx, dbsqlc.NotificationClaimParams{Now: p.Now, Max: int32(p.Max),
			LeaseUntil: p.LeaseUntil, SkipTenants: p.SkipTenants})
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

// notices converts rows of escalation_outbox: every notice is of an
// escalation.
func notices(rows []dbsqlc.EscalationOutbox, err error) ([]ledger.Notification, error) {
	if err != nil {
		return nil, err
	}
	out := make([]ledger.Notification, len(rows))
	for i, r := range rows {
		out[i] = notification(r.NoticeID, r.TenantID, r.OperationID, ledger.Escalated, r.FenceToken,
			r.Attempts, r.CreatedAt, r.NextAttemptAt, r.DeliveredAt, r.LastStatus, r.LastError, r.GaveUpAt)
	}
	return out, nil
}

// DigestExists implements ledger.NoticeDriver.
func (d driver) DigestExists(ctx context.Context, team string, day time.Time) (bool, error) {
	return d.q.DigestExists(ctx, dbsqlc.DigestExistsParams{Team: team, Day: pgtype.Date{Time: day, Valid: true}})
}

// DigestInsert implements ledger.NoticeDriver.
func (d driver) DigestInsert(ctx context.Context, p ledger.DigestInsertParams) error {
	return d.q.DigestInsert(ctx, dbsqlc.DigestInsertParams{Team: p.Team, Day: pgtype.Date{Time: p.Day, Valid: true},
		At: p.At})
}
