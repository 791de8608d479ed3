package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"time"

	"github.com/gorilla/securecookie"
	"github.com/gorilla/sessions"

	"settle/ledger"
)

// SessionCookie is the name of the console's session cookie.
const SessionCookie = "settle_session"

// Keys of the identity a DBStore session carries in Values.
const (
	ValueSubject = "subject" // string: "oidc:…" or "demo:…"
	ValueName    = "name"    // string
	ValueEmail   = "email"   // string
	ValueClaims  = "claims"  // []string: the role claim's values
)

// DBStore is a gorilla sessions.Store whose cookie carries only a random
// session id (256 bits, signed); the identity lives in the ledger
// database's session row, keyed by the id's SHA-256. Deleting the row
// (sign-out, revocation, expiry) ends the session at once everywhere.
type DBStore struct {
	sessions ledger.SessionStore
	codec    *securecookie.SecureCookie
	absolute time.Duration
	idle     time.Duration
	secure   bool
	now      func() time.Time
}

var _ sessions.Store = (*DBStore)(nil)

// NewDBStore returns a store over ss. key signs the cookie (MinKeyBytes or
// more); secure=false drops the cookie's Secure flag and is for loopback
// only; now is the clock the session rows' times come from, and must be
// the one ss decides expiry by.
func NewDBStore(ss ledger.SessionStore, key []byte, absolute, idle time.Duration, secure bool, now func() time.Time) (*DBStore, error) {
	if len(key) < MinKeyBytes {
		return nil, ledger.Errorf(ledger.EInvalid, "the session key must be at least %d bytes", MinKeyBytes)
	}
	if absolute <= 0 || idle <= 0 || idle > absolute {
		return nil, ledger.Errorf(ledger.EInvalid, "session lifetimes must be positive, idle at most absolute")
	}
	if now == nil {
		now = time.Now
	}
	codec := securecookie.New(key, nil)
	codec.MaxAge(int(absolute / time.Second))
	return &DBStore{sessions: ss, codec: codec, absolute: absolute, idle: idle, secure: secure, now: now}, nil
}

// Secure reports whether the store's cookies carry the Secure flag; the
// console's other cookies (the CSRF cookie) follow it.
func (s *DBStore) Secure() bool { return s.secure }

func (s *DBStore) options() *sessions.Options {
	return &sessions.Options{
		Path: "/", MaxAge: int(s.absolute / time.Second),
		Secure: s.secure, HttpOnly: true, SameSite: http.SameSiteLaxMode,
	}
}

// Get returns the request's session, cached for the request by gorilla's
// registry.
func (s *DBStore) Get(r *http.Request, name string) (*sessions.Session, error) {
	return sessions.GetRegistry(r).Get(s, name)
}

// New returns the live session the request's cookie names, touched (its
// idle expiry moved on), with IsNew false; or an empty new session when
// there is no cookie, it does not verify, or its row has ended. Only a
// database failure is an error.
func (s *DBStore) New(r *http.Request, name string) (*sessions.Session, error) {
	sess := s.Fresh(name)
	c, err := r.Cookie(name)
	if err != nil {
		return sess, nil
	}
	var id string
	if err := s.codec.Decode(name, c.Value, &id); err != nil || id == "" {
		return sess, nil // forged, expired or from an old key: signed out
	}
	row, err := s.sessions.TouchSession(r.Context(), hashID(id), s.idle)
	if ledger.ErrorCode(err) == ledger.ENotFound {
		return sess, nil
	}
	if err != nil {
		return sess, fmt.Errorf("session: %w", err)
	}
	sess.ID = id
	sess.IsNew = false
	sess.Values[ValueSubject] = row.Subject
	sess.Values[ValueName] = row.Name
	sess.Values[ValueEmail] = row.Email
	sess.Values[ValueClaims] = row.Claims
	return sess, nil
}

// Fresh returns a new, empty session that ignores any cookie the request
// holds: saving it creates a new id. Sign-in uses it, so that an id
// planted before sign-in never becomes a signed-in one.
func (s *DBStore) Fresh(name string) *sessions.Session {
	sess := sessions.NewSession(s, name)
	sess.Options = s.options()
	sess.IsNew = true
	return sess
}

// Save writes the session. A session with a negative MaxAge is ended: its
// row is deleted and the cookie cleared. A new session with a subject gets
// a fresh random id and a row; an existing one only has its cookie
// re-sent. Identity is written once, at sign-in.
func (s *DBStore) Save(r *http.Request, w http.ResponseWriter, sess *sessions.Session) error {
	if sess.Options == nil {
		sess.Options = s.options()
	}
	if sess.Options.MaxAge < 0 {
		if sess.ID != "" {
			if err := s.sessions.DeleteSession(r.Context(), hashID(sess.ID)); err != nil {
				return fmt.Errorf("sign out: %w", err)
			}
		}
		http.SetCookie(w, sessions.NewCookie(sess.Name(), "", sess.Options))
		return nil
	}
	if sess.ID == "" {
		row, err := s.row(sess)
		if err != nil {
			return err
		}
		id, err := s.create(r, row)
		if err != nil {
			return err
		}
		sess.ID = id
	}
	v, err := s.codec.Encode(sess.Name(), sess.ID)
	if err != nil {
		return fmt.Errorf("session cookie: %w", err)
	}
	http.SetCookie(w, sessions.NewCookie(sess.Name(), v, sess.Options))
	return nil
}

// row builds the session row of a new session from its Values.
func (s *DBStore) row(sess *sessions.Session) (ledger.Session, error) {
	str := func(k string) string { v, _ := sess.Values[k].(string); return v }
	claims, _ := sess.Values[ValueClaims].([]string)
	if str(ValueSubject) == "" {
		return ledger.Session{}, ledger.Errorf(ledger.EInvalid, "a console session is saved only at sign-in, with a subject")
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	return ledger.Session{
		Subject: str(ValueSubject), Name: str(ValueName), Email: str(ValueEmail), Claims: claims,
		CreatedAt: now, LastSeenAt: now, IdleExpiresAt: now.Add(s.idle), ExpiresAt: now.Add(s.absolute),
	}, nil
}

// create stores row under a new random id and returns the id. A clash of
// 256-bit random ids does not happen, but retrying costs nothing.
func (s *DBStore) create(r *http.Request, row ledger.Session) (string, error) {
	for range 3 {
		var b [32]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", fmt.Errorf("session id: %w", err)
		}
		id := base64.RawURLEncoding.EncodeToString(b[:])
		row.IDHash = hashID(id)
		err := s.sessions.CreateSession(r.Context(), row)
		if ledger.ErrorCode(err) == ledger.EConflict {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("create session: %w", err)
		}
		return id, nil
	}
	return "", ledger.Errorf(ledger.EInternal, "could not make a unique session id")
}

func hashID(id string) []byte {
	h := sha256.Sum256([]byte(id))
	return h[:]
}
