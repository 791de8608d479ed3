package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"settle/auth"
	"settle/ledger"
)

var _ auth.TokenStore = (*Store)(nil)

// CreateToken implements auth.TokenStore.
func (s *Store) CreateToken(ctx context.Context, t auth.Token) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO api_tokens (token_id, tenant_id, token_hash, created_at)
		VALUES (?, ?, ?, ?)`, t.ID, t.Tenant, t.Hash, micros(t.CreatedAt))
	if err != nil {
		return fmt.Errorf("create token: %w", err)
	}
	return nil
}

const tokenCols = `token_id, tenant_id, token_hash, created_at, revoked_at`

func scanToken(row scanner) (auth.Token, error) {
	var (
		t       auth.Token
		created int64
		revoked sql.NullInt64
	)
	err := row.Scan(&t.ID, &t.Tenant, &t.Hash, &created, &revoked)
	t.CreatedAt, t.RevokedAt = fromMicros(created), fromNull(revoked)
	return t, err
}

// TokenByHash implements auth.TokenStore.
func (s *Store) TokenByHash(ctx context.Context, hash []byte) (auth.Token, error) {
	t, err := scanToken(s.r.QueryRowContext(ctx, `SELECT `+tokenCols+` FROM api_tokens WHERE token_hash = ?`, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return t, ledger.Errorf(ledger.ENotFound, "token not found")
	}
	if err != nil {
		return t, fmt.Errorf("token: %w", err)
	}
	return t, nil
}

// ListTokens implements auth.TokenStore.
func (s *Store) ListTokens(ctx context.Context) ([]auth.Token, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+tokenCols+` FROM api_tokens ORDER BY created_at DESC, token_id`)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	defer rows.Close()
	var ts []auth.Token
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, fmt.Errorf("list tokens: %w", err)
		}
		ts = append(ts, t)
	}
	return ts, rows.Err()
}

// RevokeToken implements auth.TokenStore.
func (s *Store) RevokeToken(ctx context.Context, id string, at time.Time) error {
	res, err := s.w.ExecContext(ctx, `UPDATE api_tokens SET revoked_at = coalesce(revoked_at, ?)
		WHERE token_id = ?`, micros(at), id)
	if err != nil {
		return fmt.Errorf("revoke token: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ledger.Errorf(ledger.ENotFound, "token not found")
	}
	return nil
}
