package ledger

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"time"
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
	Hash      []byte // SHA-256 of the secret token
	CreatedAt time.Time
	RevokedAt *time.Time
}

// TokenStore persists API tokens. Implemented by the PostgreSQL and SQLite
// stores. Creating and revoking are human actions: they take the Actor
// from ctx (EInvalid without one, nothing written) and record an Action in
// the same transaction.
type TokenStore interface {
	// CreateToken stores a new token and records the token.create action.
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
}

// NewToken creates a token for tenant: it returns the secret to show once
// and the record to store.
func NewToken(tenant string, now time.Time) (secret string, t Token, err error) {
	if !ValidTenant(tenant) {
		return "", Token{}, Errorf(EInvalid, "tenant must be 1-63 characters of a-z, 0-9, '.', '_' or '-'")
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
func Authenticate(ctx context.Context, s TokenStore, secret string) (Token, error) {
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
