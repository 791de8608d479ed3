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

// CallbackUpsert implements ledger.CallbackDriver.
func (d driver) CallbackUpsert(ctx context.Context, p ledger.CallbackUpsertParams) error {
	return d.w.CallbackUpsert(ctx, dbsqlc.CallbackUpsertParams{Tenant: p.Tenant, Url: p.URL, Secret: p.Secret,
		At: micros(p.At)})
}

// CallbackDelete implements ledger.CallbackDriver: the endpoint, then its
// undelivered notifications, in one transaction.
func (d driver) CallbackDelete(ctx context.Context, tenant string) (url string, found bool, err error) {
	err = d.inTx(ctx, func(q *dbsqlc.Queries) error {
		var err error
		url, err = q.CallbackDelete(ctx, tenant)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		found = true
		return q.CallbackPendingDelete(ctx, tenant)
	})
	return url, found, err
}

// CallbackGet implements ledger.CallbackDriver.
func (d driver) CallbackGet(ctx context.Context, tenant string) (ledger.Callback, bool, error) {
	r, err := d.r.CallbackGet(ctx, tenant)
	if errors.Is(err, sql.ErrNoRows) {
		return ledger.Callback{}, false, nil
	}
	return ledger.Callback{Tenant: tenant, URL: r.Url, Secret: r.Secret, CreatedAt: fromMicros(r.CreatedAt),
		UpdatedAt: fromMicros(r.UpdatedAt)}, err == nil, err
}

// OutboxClaim implements ledger.NoticeDriver in a transaction of the
// single writer, which serialises claimers.
func (d driver) OutboxClaim(ctx context.Context, p ledger.OutboxClaimParams) (ns []ledger.Notification, err error) {
	err = d.inTx(ctx, func(q *dbsqlc.Queries) error {
		switch p.Outbox {
		case ledger.OutboxCallbacks:
			ns, err = notifications(q.NotificationClaim(ctx, dbsqlc.NotificationClaimParams{Now: micros(p.Now),
				Max: int64(p.Max), LeaseUntil: micros(p.LeaseUntil)}))
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
