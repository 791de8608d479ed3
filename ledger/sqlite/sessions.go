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
)

var _ ledger.SessionStore = (*Store)(nil)

const sessionCols = `session_hash, subject, name, email, claims, created_at, last_seen_at, idle_expires_at, expires_at`

func scanSession(row *sql.Row) (ledger.Session, error) {
	var (
		s                               ledger.Session
		claims                          string
		created, seen, idleExp, expires int64
	)
	if err := row.Scan(&s.IDHash, &s.Subject, &s.Name, &s.Email, &claims, &created, &seen, &idleExp, &expires); err != nil {
		return s, err
	}
	if err := json.Unmarshal([]byte(claims), &s.Claims); err != nil {
		return s, fmt.Errorf("session claims: %w", err)
	}
	if len(s.Claims) == 0 {
		s.Claims = nil
	}
	s.CreatedAt, s.LastSeenAt = fromMicros(created), fromMicros(seen)
	s.IdleExpiresAt, s.ExpiresAt = fromMicros(idleExp), fromMicros(expires)
	return s, nil
}

func noSession() error { return ledger.Errorf(ledger.ENotFound, "no such session, or it has ended") }

// CreateSession implements ledger.SessionStore.
func (s *Store) CreateSession(ctx context.Context, sess ledger.Session) error {
	if err := sess.Validate(); err != nil {
		return err
	}
	claims := sess.Claims
	if claims == nil {
		claims = []string{}
	}
	cj, err := json.Marshal(claims)
	if err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	_, err = s.w.ExecContext(ctx, `INSERT INTO console_sessions (`+sessionCols+`)
		VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)`,
		sess.IDHash, sess.Subject, sess.Name, sess.Email, string(cj), micros(sess.CreatedAt),
		micros(sess.LastSeenAt), micros(sess.IdleExpiresAt), micros(sess.ExpiresAt))
	if err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed") {
		return ledger.Errorf(ledger.EConflict, "session id already in use")
	}
	if err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	return nil
}

// GetSession implements ledger.SessionStore.
func (s *Store) GetSession(ctx context.Context, idHash []byte) (ledger.Session, error) {
	sess, err := scanSession(s.r.QueryRowContext(ctx, `SELECT `+sessionCols+` FROM console_sessions
		WHERE session_hash = ?1 AND idle_expires_at > ?2 AND expires_at > ?2`, idHash, micros(s.clock())))
	if errors.Is(err, sql.ErrNoRows) {
		return ledger.Session{}, noSession()
	}
	if err != nil {
		return ledger.Session{}, fmt.Errorf("get session: %w", err)
	}
	return sess, nil
}

// TouchSession implements ledger.SessionStore.
func (s *Store) TouchSession(ctx context.Context, idHash []byte, idle time.Duration) (ledger.Session, error) {
	if idle <= 0 {
		return ledger.Session{}, ledger.Errorf(ledger.EInvalid, "idle lifetime must be positive")
	}
	now := s.clock()
	sess, err := scanSession(s.w.QueryRowContext(ctx, `UPDATE console_sessions
		SET last_seen_at = ?2, idle_expires_at = min(?3, expires_at)
		WHERE session_hash = ?1 AND idle_expires_at > ?2 AND expires_at > ?2
		RETURNING `+sessionCols, idHash, micros(now), micros(now.Add(idle))))
	if errors.Is(err, sql.ErrNoRows) {
		return ledger.Session{}, noSession()
	}
	if err != nil {
		return ledger.Session{}, fmt.Errorf("touch session: %w", err)
	}
	return sess, nil
}

// DeleteSession implements ledger.SessionStore.
func (s *Store) DeleteSession(ctx context.Context, idHash []byte) error {
	if _, err := s.w.ExecContext(ctx, `DELETE FROM console_sessions WHERE session_hash = ?`, idHash); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}

// RevokeSessions implements ledger.SessionStore.
func (s *Store) RevokeSessions(ctx context.Context, subject string) (int, error) {
	res, err := s.w.ExecContext(ctx, `DELETE FROM console_sessions WHERE subject = ?`, subject)
	if err != nil {
		return 0, fmt.Errorf("revoke sessions: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// DeleteExpiredSessions implements ledger.SessionStore.
func (s *Store) DeleteExpiredSessions(ctx context.Context) (int, error) {
	res, err := s.w.ExecContext(ctx, `DELETE FROM console_sessions WHERE expires_at <= ?1 OR idle_expires_at <= ?1`,
		micros(s.clock()))
	if err != nil {
		return 0, fmt.Errorf("delete expired sessions: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

var _ ledger.PersonStore = (*Store)(nil)

// KnownPerson implements ledger.PersonStore: a session row (only a verified
// sign-in writes one) or a console action in the tenant.
func (s *Store) KnownPerson(ctx context.Context, tenant, subject string) (bool, error) {
	if !ledger.IsConsolePerson(subject) {
		return false, nil
	}
	subject = ledger.NormalizeSubject(subject)
	var known bool
	err := s.r.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM console_sessions WHERE subject = ?1)
		OR EXISTS (SELECT 1 FROM actions WHERE tenant_id = ?2 AND subject = ?1)`, subject, tenant).Scan(&known)
	if err != nil {
		return false, fmt.Errorf("known person: %w", err)
	}
	return known, nil
}
