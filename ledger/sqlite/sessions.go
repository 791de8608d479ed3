package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"settle/ledger"
	"settle/ledger/sqlite/internal/dbsqlc"
)

// sessionOf reads a row; claims are a JSON array.
func sessionOf(r dbsqlc.ConsoleSession) (ledger.Session, error) {
	s := ledger.Session{IDHash: r.SessionHash, Subject: r.Subject, Name: r.Name, Email: r.Email,
		CreatedAt: fromMicros(r.CreatedAt), LastSeenAt: fromMicros(r.LastSeenAt),
		IdleExpiresAt: fromMicros(r.IdleExpiresAt), ExpiresAt: fromMicros(r.ExpiresAt)}
	if err := json.Unmarshal([]byte(r.Claims), &s.Claims); err != nil {
		return s, fmt.Errorf("session claims: %w", err)
	}
	return s, nil
}

// foundSession maps database/sql's no-rows to found=false.
func foundSession(r dbsqlc.ConsoleSession, err error) (ledger.Session, bool, error) {
	if errors.Is(err, sql.ErrNoRows) {
		return ledger.Session{}, false, nil
	}
	if err != nil {
		return ledger.Session{}, false, err
	}
	s, err := sessionOf(r)
	return s, err == nil, err
}

// SessionInsert implements ledger.SessionDriver.
func (d driver) SessionInsert(ctx context.Context, s ledger.Session) error {
	claims, err := json.Marshal(s.Claims)
	if err != nil {
		return err
	}
	err = d.w.SessionInsert(ctx, dbsqlc.SessionInsertParams{SessionHash: s.IDHash, Subject: s.Subject, Name: s.Name,
		Email: s.Email, Claims: string(claims), CreatedAt: micros(s.CreatedAt), LastSeenAt: micros(s.LastSeenAt),
		IdleExpiresAt: micros(s.IdleExpiresAt), ExpiresAt: micros(s.ExpiresAt)})
	if err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed") {
		return ledger.ErrDuplicateKey
	}
	return err
}

// SessionGet implements ledger.SessionDriver.
func (d driver) SessionGet(ctx context.Context, idHash []byte, now time.Time) (ledger.Session, bool, error) {
	return foundSession(d.r.SessionGet(ctx, dbsqlc.SessionGetParams{SessionHash: idHash, Now: micros(now)}))
}

// SessionTouch implements ledger.SessionDriver.
func (d driver) SessionTouch(ctx context.Context, p ledger.SessionTouchParams) (ledger.Session, bool, error) {
	return foundSession(d.w.SessionTouch(ctx, dbsqlc.SessionTouchParams{SessionHash: p.IDHash, Now: micros(p.Now),
		IdleExpiresAt: micros(p.IdleExpiresAt)}))
}

// SessionDelete implements ledger.SessionDriver.
func (d driver) SessionDelete(ctx context.Context, idHash []byte) error {
	return d.w.SessionDelete(ctx, idHash)
}

// SessionDeleteBySubject implements ledger.SessionDriver.
func (d driver) SessionDeleteBySubject(ctx context.Context, subject string) (int, error) {
	n, err := d.w.SessionDeleteBySubject(ctx, subject)
	return int(n), err
}

// SessionDeleteExpired implements ledger.SessionDriver.
func (d driver) SessionDeleteExpired(ctx context.Context, now time.Time) (int, error) {
	n, err := d.w.SessionDeleteExpired(ctx, micros(now))
	return int(n), err
}

// SessionList implements ledger.SessionDriver.
func (d driver) SessionList(ctx context.Context, p ledger.SessionListParams) ([]ledger.Session, error) {
	rows, err := d.r.SessionList(ctx, dbsqlc.SessionListParams{Now: micros(p.Now), Subject: p.Subject, MaxRows: int64(p.Max)})
	if err != nil {
		return nil, err
	}
	out := make([]ledger.Session, len(rows))
	for i, r := range rows {
		if out[i], err = sessionOf(r); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// PersonKnown implements ledger.SessionDriver.
func (d driver) PersonKnown(ctx context.Context, tenant, subject string) (bool, error) {
	known, err := d.r.PersonKnown(ctx, dbsqlc.PersonKnownParams{Tenant: tenant, Subject: subject})
	return known.Valid && known.Bool, err
}
