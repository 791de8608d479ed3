package ledger

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// tokenPrefix marks settle API tokens so that secret scanners and people
// can recognise one.
const tokenPrefix = "stl_"

// Token is a client service's API token, scoped to one tenant and stored
// only as a hash. Tokens are ledger data, beside the operations they give
// access to, so that the stores need nothing from the console's identity
// code (OIDC, sessions, roles). The secret itself is never stored.
type Token struct {
	ID        string // public id, e.g. "tok_1a2b3c4d5e6f"
	Tenant    string
	Name      string // what the token is for, given at creation (ValidateTokenName)
	Hash      []byte // SHA-256 of the secret token
	CreatedAt time.Time
	RevokedAt *time.Time
	// LastUsedAt is when the token last authenticated a request, to
	// within TouchEvery; nil when never used.
	LastUsedAt *time.Time
	// Rate is the token's own request rate; zero fields take the
	// replica's defaults (settle serve --rate-limit, --rate-burst).
	Rate TokenRate
}

// TokenRate is one API token's allowance: PerSecond requests a second
// sustained, with bursts of Burst. Zero means the replica's default.
type TokenRate struct {
	PerSecond int
	Burst     int
}

// String is the rate as the CLI and the console show it: "default" (the
// replica's), or "N/s" with ", burst M" when the token has its own burst.
func (r TokenRate) String() string {
	switch {
	case r.PerSecond == 0 && r.Burst == 0:
		return "default"
	case r.PerSecond == 0:
		return fmt.Sprintf("default/s, burst %d", r.Burst)
	case r.Burst == 0:
		return fmt.Sprintf("%d/s", r.PerSecond)
	}
	return fmt.Sprintf("%d/s, burst %d", r.PerSecond, r.Burst)
}

// MaxTokenRate bounds a token's rate and burst: far above what one
// replica serves, low enough to catch a typo's extra digits.
const MaxTokenRate = 1_000_000

// Validate checks a rate a token is created with.
func (r TokenRate) Validate() error {
	if r.PerSecond < 0 || r.PerSecond > MaxTokenRate || r.Burst < 0 || r.Burst > MaxTokenRate {
		return Errorf(EInvalid, "a token's rate and burst are whole numbers from 1 to %d (or 0: the replica's default)", MaxTokenRate)
	}
	return nil
}

// TouchEvery bounds how often a token's last use is written: at most once
// per this interval per token, so the API does not write on every request.
const TouchEvery = time.Minute

// MaxTokenName bounds a token's name, in characters.
const MaxTokenName = 80

// ValidateTokenName checks the name a token is created with: required,
// at most MaxTokenName characters of plain text (it is shown in the
// console and printed by the CLI).
func ValidateTokenName(name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return Errorf(EInvalid, "Give the token a name that says what it is for, e.g. “billing service, production”")
	case utf8.RuneCountInString(name) > MaxTokenName || !utf8.ValidString(name):
		return Errorf(EInvalid, "a token name is at most %d characters", MaxTokenName)
	case PlainText(name, 4*MaxTokenName) != name || name != strings.TrimSpace(name):
		return Errorf(EInvalid, "a token name is plain text: no control characters, no leading or trailing spaces")
	}
	return nil
}

// TokenStore persists API tokens. Implemented by the PostgreSQL and SQLite
// stores. Creating and revoking are human actions: they take the Actor
// from ctx (EInvalid without one, nothing written) and record an Action in
// the same transaction.
type TokenStore interface {
	// CreateToken stores a new token and records the token.create action.
	// A tenant settle does not know (TenantStore) is refused with
	// UnknownTenant, nothing written.
	CreateToken(ctx context.Context, t Token) error
	// TokenByHash returns the token with that hash, revoked or not, or
	// ENotFound. It is not tenant-scoped: authentication learns the tenant
	// from the token.
	TokenByHash(ctx context.Context, hash []byte) (Token, error)
	// ListTokens returns the tenant's tokens, newest first.
	ListTokens(ctx context.Context, tenant string) ([]Token, error)
	// RevokeToken marks the tenant's token revoked at t and records the
	// token.revoke action; ENotFound if the tenant has no such token (another
	// tenant's token included). Revoking twice keeps the first time.
	RevokeToken(ctx context.Context, tenant, id string, t time.Time) error
	// TouchToken sets the token's last use to at unless it was set less
	// than TouchEvery before at (checked in the statement itself, so
	// replicas racing write once), and reports whether it wrote. It is not
	// a person's action: nothing is recorded.
	TouchToken(ctx context.Context, tenant, id string, at time.Time) (bool, error)
}

// NewToken creates a token named name for tenant: it returns the secret to
// show once and the record to store.
func NewToken(tenant, name string, now time.Time) (secret string, t Token, err error) {
	if !ValidTenant(tenant) {
		return "", Token{}, Errorf(EInvalid, "tenant must be 1-63 characters of a-z, 0-9, '.', '_' or '-'")
	}
	if err := ValidateTokenName(name); err != nil {
		return "", Token{}, err
	}
	var id [6]byte
	var key [32]byte
	if _, err := rand.Read(id[:]); err != nil {
		return "", Token{}, err
	}
	if _, err := rand.Read(key[:]); err != nil {
		return "", Token{}, err
	}
	secret = tokenPrefix + base64.RawURLEncoding.EncodeToString(key[:])
	return secret, Token{
		ID:        "tok_" + hex.EncodeToString(id[:]),
		Tenant:    tenant,
		Name:      name,
		Hash:      HashToken(secret),
		CreatedAt: now.UTC().Truncate(time.Microsecond),
	}, nil
}

// HashToken returns the stored form of a secret token. The secret carries 256
// random bits, so a plain SHA-256 cannot be brute-forced and lets the store
// find a token by an indexed equality.
func HashToken(secret string) []byte {
	sum := sha256.Sum256([]byte(secret))
	return sum[:]
}

// Authenticate returns the token of a bearer secret, or EUnauthorized for a
// malformed, unknown or revoked one (the caller answers 401 without
// detail). Any other error is the store's: an outage is not a revocation.
// It records the token's use at now when the last recorded use is
// TouchEvery old or more, so a busy client costs one write a minute, not
// one a request; a failed write of that is not a failed authentication
// (the time is for people, the request is the client's).
func Authenticate(ctx context.Context, s TokenStore, secret string, now time.Time) (Token, error) {
	if !strings.HasPrefix(secret, tokenPrefix) || len(secret) != len(tokenPrefix)+43 {
		return Token{}, Errorf(EUnauthorized, "malformed API token")
	}
	t, err := s.TokenByHash(ctx, HashToken(secret))
	if ErrorCode(err) == ENotFound {
		return Token{}, Errorf(EUnauthorized, "unknown API token")
	}
	if err != nil {
		return Token{}, err
	}
	if t.RevokedAt != nil {
		return Token{}, Errorf(EUnauthorized, "revoked API token")
	}
	now = now.UTC().Truncate(time.Microsecond)
	if t.LastUsedAt == nil || now.Sub(*t.LastUsedAt) >= TouchEvery {
		if wrote, err := s.TouchToken(ctx, t.Tenant, t.ID, now); err == nil && wrote {
			t.LastUsedAt = &now
		}
	}
	return t, nil
}

// ValidTokenID says whether id has the shape NewToken gives ids ("tok_"
// and lower-case hex digits). The stores answer any other id as unknown
// without asking the database, which refuses some text (NUL).
func ValidTokenID(id string) bool {
	hexPart, ok := strings.CutPrefix(id, "tok_")
	if !ok || hexPart == "" || len(hexPart) > 64 {
		return false
	}
	for _, r := range hexPart {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f') {
			return false
		}
	}
	return true
}
