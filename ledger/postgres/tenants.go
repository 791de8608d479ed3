package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"settle/ledger"
	"settle/ledger/postgres/internal/dbsqlc"
)

var (
	_ ledger.TenantStore = (*Store)(nil)
	_ ledger.TokenStore  = (*Store)(nil)
	_ ledger.ActionStore = (*Store)(nil)
)

// TenantInsert implements ledger.TenantDriver.
func (d driver) TenantInsert(ctx context.Context, tenant string, at time.Time) (bool, error) {
	n, err := d.q.TenantInsert(ctx, dbsqlc.TenantInsertParams{TenantID: tenant, CreatedAt: at})
	return n > 0, err
}

// TenantList implements ledger.TenantDriver.
func (d driver) TenantList(ctx context.Context) ([]ledger.Tenant, error) {
	rows, err := d.q.TenantList(ctx)
	out := make([]ledger.Tenant, len(rows))
	for i, r := range rows {
		out[i] = ledger.Tenant{ID: r.TenantID, CreatedAt: r.CreatedAt.UTC()}
	}
	return out, err
}

// TenantKnown implements ledger.TenantDriver.
func (d driver) TenantKnown(ctx context.Context, tenant string) (bool, error) {
	return d.q.TenantKnown(ctx, tenant)
}

// TenantKnownHeld implements ledger.TenantDriver with FOR KEY SHARE.
func (d driver) TenantKnownHeld(ctx context.Context, tenant string) (bool, error) {
	return d.q.TenantKnownHeld(ctx, tenant)
}

// TokenInsert implements ledger.TenantDriver.
func (d driver) TokenInsert(ctx context.Context, t ledger.Token) error {
	return d.q.TokenInsert(ctx, dbsqlc.TokenInsertParams{TokenID: t.ID, TenantID: t.Tenant, Name: t.Name,
		TokenHash: t.Hash, CreatedAt: t.CreatedAt, RatePerSecond: optInt4(t.Rate.PerSecond), RateBurst: optInt4(t.Rate.Burst)})
}

// optInt4 is n, or NULL for 0.
func optInt4(n int) pgtype.Int4 { return pgtype.Int4{Int32: int32(n), Valid: n != 0} }

// TokenByHash implements ledger.TenantDriver.
func (d driver) TokenByHash(ctx context.Context, hash []byte) (ledger.Token, bool, error) {
	r, err := d.q.TokenByHash(ctx, hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return ledger.Token{}, false, nil
	}
	return tokenOf(dbsqlc.TokenListRow(r)), err == nil, err
}

// TokenList implements ledger.TenantDriver.
func (d driver) TokenList(ctx context.Context, tenant string) ([]ledger.Token, error) {
	rows, err := d.q.TokenList(ctx, tenant)
	out := make([]ledger.Token, len(rows))
	for i, r := range rows {
		out[i] = tokenOf(r)
	}
	return out, err
}

func tokenOf(r dbsqlc.TokenListRow) ledger.Token {
	t := ledger.Token{ID: r.TokenID, Tenant: r.TenantID, Name: r.Name, Hash: r.TokenHash,
		CreatedAt: r.CreatedAt.UTC(), RevokedAt: r.RevokedAt, LastUsedAt: r.LastUsedAt,
		Rate: ledger.TokenRate{PerSecond: int(r.RatePerSecond.Int32), Burst: int(r.RateBurst.Int32)}}
	utcp(t.RevokedAt)
	utcp(t.LastUsedAt)
	return t
}

// TokenRevoke implements ledger.TenantDriver.
func (d driver) TokenRevoke(ctx context.Context, tenant, id string, at time.Time) (bool, error) {
	n, err := d.q.TokenRevoke(ctx, dbsqlc.TokenRevokeParams{TenantID: tenant, TokenID: id, RevokedAt: at})
	return n > 0, err
}

// TokenTouch implements ledger.TenantDriver.
func (d driver) TokenTouch(ctx context.Context, p ledger.TokenTouchParams) (bool, error) {
	n, err := d.q.TokenTouch(ctx, dbsqlc.TokenTouchParams{TenantID: p.Tenant, TokenID: p.ID, LastUsedAt: p.At,
		StaleBefore: p.StaleBefore})
	return n > 0, err
}

// ActionInsert implements ledger.ActionDriver.
func (d driver) ActionInsert(ctx context.Context, a ledger.Action) error {
	return d.q.ActionInsert(ctx, actionParams(a))
}

func actionParams(a ledger.Action) dbsqlc.ActionInsertParams {
	return dbsqlc.ActionInsertParams{TenantID: a.Tenant, At: a.At, Subject: a.Subject, ActorName: a.Name,
		Role: a.Role, Kind: string(a.Kind), Object: a.Object, OperationID: a.OperationID, Reason: a.Reason,
		RequestID: a.RequestID}
}

// ActionList implements ledger.ActionDriver.
func (d driver) ActionList(ctx context.Context, tenant, operationID string, max int) ([]ledger.Action, error) {
	rows, err := d.q.ActionList(ctx, dbsqlc.ActionListParams{TenantID: tenant, OperationID: operationID, MaxRows: int32(max)})
	out := make([]ledger.Action, len(rows))
	for i, r := range rows {
		out[i] = ledger.Action{ID: r.ActionID, Tenant: r.TenantID, At: r.At.UTC(), Subject: r.Subject, Name: r.ActorName,
			Role: r.Role, Kind: ledger.ActionKind(r.Kind), Object: r.Object, OperationID: r.OperationID,
			Reason: r.Reason, RequestID: r.RequestID}
	}
	return out, err
}
