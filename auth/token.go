// Package auth holds settle's identities: API tokens for client services
// (each scoped to one tenant, stored only as a hash) and, later, console
// sign-in, sessions and roles.
package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"time"

	"settle/ledger"
)

// tokenPrefix marks settle API tokens so that secret scanners and people
// can recognise one.
const tokenPrefix = "stl_"

// Token is a stored API token. The secret itself is never stored.
type Token struct {
	ID        string // public id, e.g. "tok_1a2b3c4d5e6f"
	Tenant    string
	Hash      []byte // SHA-256 of the secret token
	CreatedAt time.Time
	RevokedAt *time.Time
}

// TokenStore persists API tokens. Implemented by the PostgreSQL and SQLite
// stores.
type TokenStore interface {
	// CreateToken stores a new token.
	CreateToken(ctx context.Context, t Token) error
	// TokenByHash returns the token with that hash, revoked or not, or
	// ledger.ENotFound.
	TokenByHash(ctx context.Context, hash []byte) (Token, error)
	// ListTokens returns every token, newest first.
	ListTokens(ctx context.Context) ([]Token, error)
	// RevokeToken marks the token revoked at t; ledger.ENotFound if there is
	// no such token. Revoking twice keeps the first time.
	RevokeToken(ctx context.Context, id string, t time.Time) error
}

// NewToken creates a token for tenant: it returns the secret to show once
// and the record to store.
func NewToken(tenant string, now time.Time) (secret string, t Token, err error) {
	if !ledger.ValidTenant(tenant) {
		return "", Token{}, ledger.Errorf(ledger.EInvalid, "tenant must be 1-63 characters of a-z, 0-9, '.', '_' or '-'")
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

// Authenticate returns the tenant of a bearer token, or ledger.EUnauthorized
// style errors: the caller maps any error to 401 without detail.
func Authenticate(ctx context.Context, s TokenStore, secret string) (Token, error) {
	if !strings.HasPrefix(secret, tokenPrefix) || len(secret) != len(tokenPrefix)+43 {
		return Token{}, ledger.Errorf(ledger.EUnauthorized, "malformed API token")
	}
	t, err := s.TokenByHash(ctx, HashToken(secret))
	if ledger.ErrorCode(err) == ledger.ENotFound {
		return Token{}, ledger.Errorf(ledger.EUnauthorized, "unknown API token")
	}
	if err != nil {
		return Token{}, err
	}
	if t.RevokedAt != nil {
		return Token{}, ledger.Errorf(ledger.EUnauthorized, "revoked API token")
	}
	return t, nil
}
