package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"settle/ledger"
	"settle/ledger/postgres/internal/dbsqlc"
)

var _ ledger.CallbackStore = (*Store)(nil)

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
