package ledger

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Session is one signed-in console session, kept in the ledger database so
// that signing out or revoking a person ends it on every replica at once.
// The store never sees the session id the browser holds: only IDHash, its
// SHA-256, so a copy of the table lets nobody sign in.
type Session struct {
	IDHash  []byte // SHA-256 of the random session id; 32 bytes
	Subject string // stable identity: "oidc:…" or "demo:…"
	Name    string // display name at sign-in
	Email   string
	// Claims are the values of the role claim at sign-in (e.g. the
	// person's groups). Roles are resolved from them at every request, so
	// that a change of the console's bindings applies without a new
	// sign-in.
	Claims     []string
	CreatedAt  time.Time
	LastSeenAt time.Time
	// IdleExpiresAt is when the session ends unless used: TouchSession
	// moves it on. It never passes ExpiresAt.
	IdleExpiresAt time.Time
	ExpiresAt     time.Time // absolute: no use extends it
}

// Limits of a session's fields, so that a provider's huge claim cannot
// bloat every request.
const (
	MaxSessionClaims   = 200
	MaxSessionClaimLen = 200
)

// Validate reports whether s can be stored.
func (s Session) Validate() error {
	switch {
	case len(s.IDHash) != 32:
		return Errorf(EInvalid, "a session is stored by the SHA-256 of its id (32 bytes)")
	case s.Subject == "" || len(s.Subject) > 300 || !strings.Contains(s.Subject, ":"):
		return Errorf(EInvalid, "a session needs a stable subject such as oidc:… or demo:…")
	case len(s.Name) > 200 || len(s.Email) > 320:
		return Errorf(EInvalid, "a session's name or email is too long")
	case len(s.Claims) > MaxSessionClaims:
		return Errorf(EInvalid, "a session keeps at most %d claim values", MaxSessionClaims)
	case s.CreatedAt.IsZero() || !s.ExpiresAt.After(s.CreatedAt) || !s.IdleExpiresAt.After(s.CreatedAt):
		return Errorf(EInvalid, "a session needs its creation time and expiries after it")
	case s.IdleExpiresAt.After(s.ExpiresAt):
		return Errorf(EInvalid, "a session's idle expiry cannot pass its absolute expiry")
	}
	for _, c := range s.Claims {
		if len(c) > MaxSessionClaimLen {
			return Errorf(EInvalid, "a session's claim values are at most %d bytes", MaxSessionClaimLen)
		}
	}
	return nil
}

// SessionStore keeps console sessions. Both stores implement it. Expiry is
// decided by the store's clock, so every replica agrees on it.
type SessionStore interface {
	// CreateSession stores a new session. EInvalid when s does not
	// validate; EConflict when its id hash is taken (a repeated random id:
	// make another).
	CreateSession(ctx context.Context, s Session) error
	// GetSession returns the live session with this id hash, or ENotFound
	// when there is none, it was deleted or revoked, or it has expired
	// (idle or absolute).
	GetSession(ctx context.Context, idHash []byte) (Session, error)
	// TouchSession records a use of the live session: LastSeenAt becomes
	// now and IdleExpiresAt now+idle (capped at ExpiresAt). ENotFound as
	// for GetSession.
	TouchSession(ctx context.Context, idHash []byte, idle time.Duration) (Session, error)
	// DeleteSession ends one session (sign-out). Deleting a session that
	// is already gone is not an error: signing out twice is harmless.
	DeleteSession(ctx context.Context, idHash []byte) error
	// RevokeSessions ends every session of subject at once and returns
	// how many there were.
	RevokeSessions(ctx context.Context, subject string) (int, error)
	// DeleteExpiredSessions removes the rows of sessions that have
	// expired, returning how many; GetSession already ignores them, so
	// this only keeps the table small.
	DeleteExpiredSessions(ctx context.Context) (int, error)
}

// MaxListedSessions bounds ListSessions: a deployment has people, not
// millions of them, and a listing that grows without end is a risk.
const MaxListedSessions = 1000

// SessionLister lists live console sessions, for `settle session list`:
// who is signed in, by name and e-mail beside the subject (an opaque
// provider subject such as Dex's tells an operator nothing). Both stores
// implement it.
type SessionLister interface {
	// ListSessions returns the live sessions (neither idle nor absolutely
	// expired), subject then newest first; subject "" lists everyone's.
	// At most MaxListedSessions.
	ListSessions(ctx context.Context, subject string) ([]Session, error)
}

var (
	_ SessionStore  = (*Ledger)(nil)
	_ SessionLister = (*Ledger)(nil)
	_ PersonStore   = (*Ledger)(nil)
)

func noSession() error { return Errorf(ENotFound, "no such session, or it has ended") }

// CreateSession implements SessionStore.
func (l *Ledger) CreateSession(ctx context.Context, s Session) error {
	if err := s.Validate(); err != nil {
		return err
	}
	if s.Claims == nil {
		s.Claims = []string{}
	}
	s.CreatedAt, s.LastSeenAt = s.CreatedAt.UTC(), s.LastSeenAt.UTC()
	s.IdleExpiresAt, s.ExpiresAt = s.IdleExpiresAt.UTC(), s.ExpiresAt.UTC()
	err := l.d.SessionInsert(ctx, s)
	if errors.Is(err, ErrDuplicateKey) {
		return Errorf(EConflict, "session id already in use")
	}
	if err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	return nil
}

// GetSession implements SessionStore.
func (l *Ledger) GetSession(ctx context.Context, idHash []byte) (Session, error) {
	s, found, err := l.d.SessionGet(ctx, idHash, l.clock())
	switch {
	case err != nil:
		return Session{}, fmt.Errorf("get session: %w", err)
	case !found:
		return Session{}, noSession()
	}
	return storedSession(s), nil
}

// TouchSession implements SessionStore.
func (l *Ledger) TouchSession(ctx context.Context, idHash []byte, idle time.Duration) (Session, error) {
	if idle <= 0 {
		return Session{}, Errorf(EInvalid, "idle lifetime must be positive")
	}
	now := l.clock()
	s, found, err := l.d.SessionTouch(ctx, SessionTouchParams{IDHash: idHash, Now: now, IdleExpiresAt: now.Add(idle)})
	switch {
	case err != nil:
		return Session{}, fmt.Errorf("touch session: %w", err)
	case !found:
		return Session{}, noSession()
	}
	return storedSession(s), nil
}

// DeleteSession implements SessionStore.
func (l *Ledger) DeleteSession(ctx context.Context, idHash []byte) error {
	if err := l.d.SessionDelete(ctx, idHash); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}

// RevokeSessions implements SessionStore.
func (l *Ledger) RevokeSessions(ctx context.Context, subject string) (int, error) {
	n, err := l.d.SessionDeleteBySubject(ctx, subject)
	if err != nil {
		return 0, fmt.Errorf("revoke sessions: %w", err)
	}
	return n, nil
}

// DeleteExpiredSessions implements SessionStore.
func (l *Ledger) DeleteExpiredSessions(ctx context.Context) (int, error) {
	n, err := l.d.SessionDeleteExpired(ctx, l.clock())
	if err != nil {
		return 0, fmt.Errorf("delete expired sessions: %w", err)
	}
	return n, nil
}

// ListSessions implements SessionLister.
func (l *Ledger) ListSessions(ctx context.Context, subject string) ([]Session, error) {
	rows, err := l.d.SessionList(ctx, SessionListParams{Now: l.clock(), Subject: subject, Max: MaxListedSessions})
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	for i := range rows {
		rows[i] = storedSession(rows[i])
	}
	return rows, nil
}

// KnownPerson implements PersonStore: a session row (only a verified
// sign-in writes one) or a console action in the tenant.
func (l *Ledger) KnownPerson(ctx context.Context, tenant, subject string) (bool, error) {
	if !IsConsolePerson(subject) {
		return false, nil
	}
	known, err := l.d.PersonKnown(ctx, tenant, NormalizeSubject(subject))
	if err != nil {
		return false, fmt.Errorf("known person: %w", err)
	}
	return known, nil
}

// storedSession is a session as the store read it: no claims is nil.
func storedSession(s Session) Session {
	if len(s.Claims) == 0 {
		s.Claims = nil
	}
	return s
}
