package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"settle/auth"
	"settle/ledger"
)

var _ auth.TokenStore = (*Store)(nil)

// CreateToken implements auth.TokenStore.
func (s *Store) CreateToken(ctx context.Context, t auth.Token) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO api_tokens (token_id, tenant_id, token_hash, created_at)
		VALUES ($1, $2, $3, $4)`, t.ID, t.Tenant, t.Hash, t.CreatedAt)
	if err != nil {
		return fmt.Errorf("create token: %w", err)
	}
	return nil
}

// TokenByHash implements auth.TokenStore.
func (s *Store) TokenByHash(ctx context.Context, hash []byte) (auth.Token, error) {
	rows, err := s.pool.Query(ctx, `SELECT token_id, tenant_id, token_hash, created_at, revoked_at
		FROM api_tokens WHERE token_hash = $1`, hash)
	if err != nil {
		return auth.Token{}, fmt.Errorf("token: %w", err)
	}
	t, err := pgx.CollectExactlyOneRow(rows, scanToken)
	if errors.Is(err, pgx.ErrNoRows) {
		return t, ledger.Errorf(ledger.ENotFound, "token not found")
	}
	if err != nil {
		return t, fmt.Errorf("token: %w", err)
	}
	return t, nil
}

// ListTokens implements auth.TokenStore.
func (s *Store) ListTokens(ctx context.Context) ([]auth.Token, error) {
	rows, err := s.pool.Query(ctx, `SELECT token_id, tenant_id, token_hash, created_at, revoked_at
		FROM api_tokens ORDER BY created_at DESC, token_id`)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	ts, err := pgx.CollectRows(rows, scanToken)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	return ts, nil
}

// RevokeToken implements auth.TokenStore.
func (s *Store) RevokeToken(ctx context.Context, id string, at time.Time) error {
	tag, err := s.pool.Exec(ctx, `UPDATE api_tokens SET revoked_at = coalesce(revoked_at, $2)
		WHERE token_id = $1`, id, at)
	if err != nil {
		return fmt.Errorf("revoke token: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return ledger.Errorf(ledger.ENotFound, "token not found")
	}
	return nil
}

func scanToken(row pgx.CollectableRow) (auth.Token, error) {
	var t auth.Token
	err := row.Scan(&t.ID, &t.Tenant, &t.Hash, &t.CreatedAt, &t.RevokedAt)
	t.CreatedAt = t.CreatedAt.UTC()
	utcp(t.RevokedAt)
	return t, err
}
