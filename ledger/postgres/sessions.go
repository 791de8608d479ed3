package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"settle/ledger"
	"settle/ledger/postgres/internal/dbsqlc"
)

func sessionOf(r dbsqlc.ConsoleSession) ledger.Session {
	return ledger.Session{IDHash: r.SessionHash, Subject: r.Subject, Name: r.Name, Email: r.Email, Claims: r.Claims,
		CreatedAt: r.CreatedAt, LastSeenAt: r.LastSeenAt, IdleExpiresAt: r.IdleExpiresAt, ExpiresAt: r.ExpiresAt}
}

// found maps pgx's no-rows to found=false.
func found(err error) (bool, error) {
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// SessionInsert implements ledger.SessionDriver.
func (d driver) SessionInsert(ctx context.Context, s ledger.Session) error {
	err := d.q.SessionInsert(ctx, dbsqlc.SessionInsertParams{SessionHash: s.IDHash, Subject: s.Subject, Name: s.Name,
		Email: s.Email, Claims: s.Claims, CreatedAt: s.CreatedAt, LastSeenAt: s.LastSeenAt,
		IdleExpiresAt: s.IdleExpiresAt, ExpiresAt: s.ExpiresAt})
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" {
		return ledger.ErrDuplicateKey
	}
	return err
}

// SessionGet implements ledger.SessionDriver.
func (d driver) SessionGet(ctx context.Context, idHash []byte, now time.Time) (ledger.Session, bool, error) {
	r, err := d.q.SessionGet(ctx, dbsqlc.SessionGetParams{SessionHash: idHash, Now: now})
	ok, err := found(err)
	return sessionOf(r), ok, err
}

// SessionTouch implements ledger.SessionDriver.
func (d driver) SessionTouch(ctx context.Context, p ledger.SessionTouchParams) (ledger.Session, bool, error) {
	r, err := d.q.SessionTouch(ctx, dbsqlc.SessionTouchParams{SessionHash: p.IDHash, Now: p.Now, IdleExpiresAt: p.IdleExpiresAt})
	ok, err := found(err)
	return sessionOf(r), ok, err
}

// SessionDelete implements ledger.SessionDriver.
func (d driver) SessionDelete(ctx context.Context, idHash []byte) error {
	return d.q.SessionDelete(ctx, idHash)
}

// SessionDeleteBySubject implements ledger.SessionDriver.
func (d driver) SessionDeleteBySubject(ctx context.Context, subject string) (int, error) {
	n, err := d.q.SessionDeleteBySubject(ctx, subject)
	return int(n), err
}

// SessionDeleteExpired implements ledger.SessionDriver.
func (d driver) SessionDeleteExpired(ctx context.Context, now time.Time) (int, error) {
	n, err := d.q.SessionDeleteExpired(ctx, now)
	return int(n), err
}

// SessionList implements ledger.SessionDriver.
func (d driver) SessionList(ctx context.Context, p ledger.SessionListParams) ([]ledger.Session, error) {
	rows, err := d.q.SessionList(ctx, dbsqlc.SessionListParams{Now: p.Now, Subject: p.Subject, MaxRows: int32(p.Max)})
	out := make([]ledger.Session, len(rows))
	for i, r := range rows {
		out[i] = sessionOf(r)
	}
	return out, err
}

// PersonKnown implements ledger.SessionDriver.
func (d driver) PersonKnown(ctx context.Context, tenant, subject string) (bool, error) {
	known, err := d.q.PersonKnown(ctx, dbsqlc.PersonKnownParams{Tenant: tenant, Subject: subject})
	return known.Valid && known.Bool, err
}
