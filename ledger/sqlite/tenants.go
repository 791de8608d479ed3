package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"settle/ledger"
	"settle/ledger/sqlite/internal/dbsqlc"
)

var (
	_ ledger.TenantStore = (*Store)(nil)
	_ ledger.TokenStore  = (*Store)(nil)
	_ ledger.ActionStore = (*Store)(nil)
)

// TenantInsert implements ledger.TenantDriver.
func (d driver) TenantInsert(ctx context.Context, tenant string, at time.Time) (bool, error) {
	n, err := d.w.TenantInsert(ctx, dbsqlc.TenantInsertParams{TenantID: tenant, CreatedAt: micros(at)})
	return n > 0, err
}

// TenantList implements ledger.TenantDriver.
func (d driver) TenantList(ctx context.Context) ([]ledger.Tenant, error) {
	rows, err := d.r.TenantList(ctx)
	out := make([]ledger.Tenant, len(rows))
	for i, r := range rows {
		out[i] = ledger.Tenant{ID: r.TenantID, CreatedAt: fromMicros(r.CreatedAt)}
	}
	return out, err
}

// TenantKnown implements ledger.TenantDriver.
func (d driver) TenantKnown(ctx context.Context, tenant string) (bool, error) {
	return d.r.TenantKnown(ctx, tenant)
}

// TenantKnownHeld implements ledger.TenantDriver: inside WithTx the read
// is the single writer's, which no erasure passes until it commits.
func (d driver) TenantKnownHeld(ctx context.Context, tenant string) (bool, error) {
	return d.w.TenantKnownHeld(ctx, tenant)
}

// TokenInsert implements ledger.TenantDriver.
func (d driver) TokenInsert(ctx context.Context, t ledger.Token) error {
	return d.w.TokenInsert(ctx, dbsqlc.TokenInsertParams{TokenID: t.ID, TenantID: t.Tenant, Name: t.Name,
		TokenHash: t.Hash, CreatedAt: micros(t.CreatedAt), RatePerSecond: optInt(t.Rate.PerSecond), RateBurst: optInt(t.Rate.Burst)})
}

// optInt is n, or NULL for 0.
func optInt(n int) sql.NullInt64 { return sql.NullInt64{Int64: int64(n), Valid: n != 0} }

// TokenByHash implements ledger.TenantDriver.
func (d driver) TokenByHash(ctx context.Context, hash []byte) (ledger.Token, bool, error) {
	r, err := d.r.TokenByHash(ctx, hash)
	if errors.Is(err, sql.ErrNoRows) {
		return ledger.Token{}, false, nil
	}
	return tokenOf(dbsqlc.TokenListRow(r)), err == nil, err
}

// TokenList implements ledger.TenantDriver.
func (d driver) TokenList(ctx context.Context, tenant string) ([]ledger.Token, error) {
	rows, err := d.r.TokenList(ctx, tenant)
	out := make([]ledger.Token, len(rows))
	for i, r := range rows {
		out[i] = tokenOf(r)
	}
	return out, err
}

func tokenOf(r dbsqlc.TokenListRow) ledger.Token {
	return ledger.Token{ID: r.TokenID, Tenant: r.TenantID, Name: r.Name, Hash: r.TokenHash,
		CreatedAt: fromMicros(r.CreatedAt), RevokedAt: nullTime(r.RevokedAt), LastUsedAt: nullTime(r.LastUsedAt),
		Rate: ledger.TokenRate{PerSecond: int(r.RatePerSecond.Int64), Burst: int(r.RateBurst.Int64)}}
}

// TokenRevoke implements ledger.TenantDriver.
func (d driver) TokenRevoke(ctx context.Context, tenant, id string, at time.Time) (bool, error) {
	n, err := d.w.TokenRevoke(ctx, dbsqlc.TokenRevokeParams{TenantID: tenant, TokenID: id, RevokedAt: micros(at)})
	return n > 0, err
}

// TokenTouch implements ledger.TenantDriver.
func (d driver) TokenTouch(ctx context.Context, p ledger.TokenTouchParams) (bool, error) {
	n, err := d.w.TokenTouch(ctx, dbsqlc.TokenTouchParams{TenantID: p.Tenant, TokenID: p.ID, LastUsedAt: micros(p.At),
		StaleBefore: micros(p.StaleBefore)})
	return n > 0, err
}

// ActionInsert implements ledger.ActionDriver.
func (d driver) ActionInsert(ctx context.Context, a ledger.Action) error {
	return d.w.ActionInsert(ctx, actionParams(a))
}

func actionParams(a ledger.Action) dbsqlc.ActionInsertParams {
	return dbsqlc.ActionInsertParams{TenantID: a.Tenant, At: micros(a.At), Subject: a.Subject, ActorName: a.Name,
		Role: a.Role, Kind: string(a.Kind), Object: a.Object, OperationID: a.OperationID, Reason: a.Reason,
		RequestID: a.RequestID}
}

// ActionList implements ledger.ActionDriver.
func (d driver) ActionList(ctx context.Context, tenant, operationID string, max int) ([]ledger.Action, error) {
	rows, err := d.r.ActionList(ctx, dbsqlc.ActionListParams{TenantID: tenant, OperationID: operationID, MaxRows: int64(max)})
	out := make([]ledger.Action, len(rows))
	for i, r := range rows {
		out[i] = ledger.Action{ID: r.ActionID, Tenant: r.TenantID, At: fromMicros(r.At), Subject: r.Subject, Name: r.ActorName,
			Role: r.Role, Kind: ledger.ActionKind(r.Kind), Object: r.Object, OperationID: r.OperationID,
			Reason: r.Reason, RequestID: r.RequestID}
	}
	return out, err
}
