package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"settle/ledger"
	"settle/ledger/sqlite/internal/dbsqlc"
)

var _ ledger.EscalationStore = (*Store)(nil)

// OutboxClaim implements ledger.NoticeDriver in a transaction of the
// single writer, which serialises claimers.
func (d driver) OutboxClaim(ctx context.Context, p ledger.OutboxClaimParams) (ns []ledger.Notification, err error) {
	err = d.inTx(ctx, func(q *dbsqlc.Queries) error {
		switch p.Outbox {
		case ledger.OutboxCallbacks:
			skip, err := json.Marshal(p.SkipTenants)
			if err != nil {
				return err
			}
			ns, err = notifications(q.NotificationClaim(ctx, dbsqlc.NotificationClaimParams{Now: micros(p.Now),
				Max: int64(p.Max), LeaseUntil: micros(p.LeaseUntil), SkipTenants: string(skip)}))
			return err
		case ledger.OutboxEscalations:
			ns, err = notices(q.EscalationNoticeClaim(ctx, dbsqlc.EscalationNoticeClaimParams{Now: micros(p.Now),
				Max: int64(p.Max), LeaseUntil: micros(p.LeaseUntil)}))
			return err
		}
		return unknownOutbox(p.Outbox)
	})
	return ns, err
}

// OutboxDelivered implements ledger.NoticeDriver.
func (d driver) OutboxDelivered(ctx context.Context, p ledger.OutboxMarkParams) (bool, error) {
	switch p.Outbox {
	case ledger.OutboxCallbacks:
		n, err := d.w.NotificationDelivered(ctx, dbsqlc.NotificationDeliveredParams{ID: p.ID, At: micros(p.At),
			Status: int64(p.Status)})
		return n > 0, err
	case ledger.OutboxEscalations:
		n, err := d.w.EscalationNoticeDelivered(ctx, dbsqlc.EscalationNoticeDeliveredParams{ID: p.ID,
			At: micros(p.At), Status: int64(p.Status)})
		return n > 0, err
	}
	return false, unknownOutbox(p.Outbox)
}

// OutboxFailed implements ledger.NoticeDriver: the update, then whether the
// row exists, in one transaction.
func (d driver) OutboxFailed(ctx context.Context, p ledger.OutboxMarkParams) (found bool, err error) {
	err = d.inTx(ctx, func(q *dbsqlc.Queries) error {
		switch p.Outbox {
		case ledger.OutboxCallbacks:
			err := q.NotificationFailed(ctx, dbsqlc.NotificationFailedParams{ID: p.ID, Next: micros(p.At),
				Status: int64(p.Status), Error: p.Error})
			if err != nil {
				return err
			}
			found, err = q.NotificationExists(ctx, p.ID)
			return err
		case ledger.OutboxEscalations:
			err := q.EscalationNoticeFailed(ctx, dbsqlc.EscalationNoticeFailedParams{ID: p.ID, Next: micros(p.At),
				Status: int64(p.Status), Error: p.Error})
			if err != nil {
				return err
			}
			found, err = q.EscalationNoticeExists(ctx, p.ID)
			return err
		}
		return unknownOutbox(p.Outbox)
	})
	return found, err
}

// OutboxGiveUp implements ledger.NoticeDriver as OutboxFailed does.
func (d driver) OutboxGiveUp(ctx context.Context, p ledger.OutboxMarkParams) (found bool, err error) {
	err = d.inTx(ctx, func(q *dbsqlc.Queries) error {
		switch p.Outbox {
		case ledger.OutboxCallbacks:
			err := q.NotificationGiveUp(ctx, dbsqlc.NotificationGiveUpParams{ID: p.ID, At: micros(p.At),
				Status: int64(p.Status), Error: p.Error})
			if err != nil {
				return err
			}
			found, err = q.NotificationExists(ctx, p.ID)
			return err
		case ledger.OutboxEscalations:
			err := q.EscalationNoticeGiveUp(ctx, dbsqlc.EscalationNoticeGiveUpParams{ID: p.ID, At: micros(p.At),
				Status: int64(p.Status), Error: p.Error})
			if err != nil {
				return err
			}
			found, err = q.EscalationNoticeExists(ctx, p.ID)
			return err
		}
		return unknownOutbox(p.Outbox)
	})
	return found, err
}

// OutboxGivenUpCount implements ledger.NoticeDriver.
func (d driver) OutboxGivenUpCount(ctx context.Context, o ledger.Outbox, tenant string) (int, error) {
	switch o {
	case ledger.OutboxCallbacks:
		n, err := d.r.NotificationGivenUpCount(ctx, tenant)
		return int(n), err
	case ledger.OutboxEscalations:
		n, err := d.r.EscalationNoticeGivenUpCount(ctx, tenant)
		return int(n), err
	}
	return 0, unknownOutbox(o)
}

// OutboxGivenUpList implements ledger.NoticeDriver.
func (d driver) OutboxGivenUpList(ctx context.Context, o ledger.Outbox, tenant string, max int) ([]ledger.Notification, error) {
	switch o {
	case ledger.OutboxCallbacks:
		return notifications(d.r.NotificationGivenUpList(ctx, dbsqlc.NotificationGivenUpListParams{Tenant: tenant,
			Max: int64(max)}))
	case ledger.OutboxEscalations:
		return notices(d.r.EscalationNoticeGivenUpList(ctx, dbsqlc.EscalationNoticeGivenUpListParams{Tenant: tenant,
			Max: int64(max)}))
	}
	return nil, unknownOutbox(o)
}

// OutboxRetry implements ledger.NoticeDriver.
func (d driver) OutboxRetry(ctx context.Context, o ledger.Outbox, tenant string, at time.Time) (int, error) {
	switch o {
	case ledger.OutboxCallbacks:
		n, err := d.w.NotificationRetry(ctx, dbsqlc.NotificationRetryParams{Tenant: tenant, At: micros(at)})
		return int(n), err
	case ledger.OutboxEscalations:
		n, err := d.w.EscalationNoticeRetry(ctx, dbsqlc.EscalationNoticeRetryParams{Tenant: tenant, At: micros(at)})
		return int(n), err
	}
	return 0, unknownOutbox(o)
}

// OutboxList implements ledger.NoticeDriver.
func (d driver) OutboxList(ctx context.Context, o ledger.Outbox, tenant, operationID string) ([]ledger.Notification, error) {
	switch o {
	case ledger.OutboxCallbacks:
		return notifications(d.r.NotificationList(ctx, dbsqlc.NotificationListParams{Tenant: tenant,
			OperationID: operationID}))
	case ledger.OutboxEscalations:
		return notices(d.r.EscalationNoticeList(ctx, dbsqlc.EscalationNoticeListParams{Tenant: tenant,
			OperationID: operationID}))
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
func notification(id int64, tenant, op string, state ledger.State, fence, attempts, created, next int64,
	delivered, status sql.NullInt64, lastErr string, gaveUp sql.NullInt64) ledger.Notification {
	return ledger.Notification{ID: id, Tenant: tenant, OperationID: op, State: state, Fence: fence,
		Attempts: int(attempts), CreatedAt: fromMicros(created), NextAttemptAt: fromMicros(next),
		DeliveredAt: fromNull(delivered), LastStatus: int(status.Int64), LastError: lastErr, GaveUpAt: fromNull(gaveUp)}
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

// DigestExists implements ledger.NoticeDriver; days are stored as
// YYYY-MM-DD text.
func (d driver) DigestExists(ctx context.Context, team string, day time.Time) (bool, error) {
	return d.r.DigestExists(ctx, dbsqlc.DigestExistsParams{Team: team, Day: day.Format(time.DateOnly)})
}

// DigestInsert implements ledger.NoticeDriver.
func (d driver) DigestInsert(ctx context.Context, p ledger.DigestInsertParams) error {
	return d.w.DigestInsert(ctx, dbsqlc.DigestInsertParams{Team: p.Team, Day: p.Day.Format(time.DateOnly),
		At: micros(p.At)})
}
