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

// callbackCTE queues, in the statement that records a transition, one
// notification for each row of u that reached a state the tenant is told
// about, when the tenant has a callback. Being part of that statement is the
// point: the transition and its notification commit, or fail, together.
// ON CONFLICT keeps it to one notification per state reached. The esc
// part queues the owning team's notice of every escalation, callback or
// not (ledger.EscalationStore). The parameter named by param holds
// ledger.CallbackStates (see callbackStates).
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
