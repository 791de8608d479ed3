package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"settle/ledger"
)

var _ ledger.TokenStore = (*Store)(nil)

// CreateToken implements ledger.TokenStore.
func (s *Store) CreateToken(ctx context.Context, t ledger.Token) error {
	err := s.withAction(ctx, ledger.ActionTokenCreate, t.Tenant, t.ID, func(tx *sql.Tx, _ *ledger.Action) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO api_tokens (token_id, tenant_id, token_hash, created_at)
			VALUES (?, ?, ?, ?)`, t.ID, t.Tenant, t.Hash, micros(t.CreatedAt))
		return err
	})
	if err != nil {
		return fmt.Errorf("create token: %w", err)
	}
	return nil
}

const tokenCols = `token_id, tenant_id, token_hash, created_at, revoked_at`

func scanToken(row scanner) (ledger.Token, error) {
	var (
		t       ledger.Token
		created int64
		revoked sql.NullInt64
	)
	err := row.Scan(&t.ID, &t.Tenant, &t.Hash, &created, &revoked)
	t.CreatedAt, t.RevokedAt = fromMicros(created), fromNull(revoked)
	return t, err
}

// TokenByHash implements ledger.TokenStore.
func (s *Store) TokenByHash(ctx context.Context, hash []byte) (ledger.Token, error) {
	t, err := scanToken(s.r.QueryRowContext(ctx, `SELECT `+tokenCols+` FROM api_tokens WHERE token_hash = ?`, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return t, ledger.Errorf(ledger.ENotFound, "token not found")
	}
	if err != nil {
		return t, fmt.Errorf("token: %w", err)
	}
	return t, nil
}

// ListTokens implements ledger.TokenStore.
func (s *Store) ListTokens(ctx context.Context, tenant string) ([]ledger.Token, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+tokenCols+` FROM api_tokens WHERE tenant_id = ?
		ORDER BY created_at DESC, token_id`, tenant)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	defer rows.Close()
	var ts []ledger.Token
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, fmt.Errorf("list tokens: %w", err)
		}
		ts = append(ts, t)
	}
	return ts, rows.Err()
}

// RevokeToken implements ledger.TokenStore.
func (s *Store) RevokeToken(ctx context.Context, tenant, id string, at time.Time) error {
	if !ledger.ValidTokenID(id) {
		return ledger.Errorf(ledger.ENotFound, "token not found")
	}
	err := s.withAction(ctx, ledger.ActionTokenRevoke, tenant, id, func(tx *sql.Tx, _ *ledger.Action) error {
		res, err := tx.ExecContext(ctx, `UPDATE api_tokens SET revoked_at = coalesce(revoked_at, ?)
			WHERE tenant_id = ? AND token_id = ?`, micros(at), tenant, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ledger.Errorf(ledger.ENotFound, "token not found")
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("revoke token: %w", err)
	}
	return nil
}
