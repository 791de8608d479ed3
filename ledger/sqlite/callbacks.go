package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"settle/ledger"
	"settle/ledger/sqlite/internal/dbsqlc"
)

var _ ledger.CallbackStore = (*Store)(nil)

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
