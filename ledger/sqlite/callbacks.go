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
func enqueueCallbacks(ctx context.Context, tx dbsqlc.DBTX, evs []event) error {
	for _, e := range evs {
		if e.op.State == ledger.Escalated {
			// The owning team's notice (ledger.EscalationStore), whether or not
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
