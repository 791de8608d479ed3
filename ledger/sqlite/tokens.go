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
	if err := ledger.ValidateTokenName(t.Name); err != nil {
		return err
	}
	err := s.withAction(ctx, ledger.ActionTokenCreate, t.Tenant, t.ID, func(tx *sql.Tx, _ *ledger.Action) error {
		var known bool
		err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM tenants WHERE tenant_id = ?)`, t.Tenant).Scan(&known)
		if err != nil {
			return err
		}
		if !known {
			return ledger.UnknownTenant(t.Tenant)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO api_tokens (token_id, tenant_id, name, token_hash, created_at)
			VALUES (?, ?, ?, ?, ?)`, t.ID, t.Tenant, t.Name, t.Hash, micros(t.CreatedAt))
		return err
	})
	if err != nil {
		return fmt.Errorf("create token: %w", err)
	}
	return nil
}

const tokenCols = `token_id, tenant_id, name, token_hash, created_at, revoked_at, last_used_at`

func scanToken(row scanner) (ledger.Token, error) {
	var (
		t             ledger.Token
		created       int64
		revoked, used sql.NullInt64
	)
	err := row.Scan(&t.ID, &t.Tenant, &t.Name, &t.Hash, &created, &revoked, &used)
	t.CreatedAt, t.RevokedAt, t.LastUsedAt = fromMicros(created), fromNull(revoked), fromNull(used)
	return t, err
}

// TouchToken implements ledger.TokenStore.
func (s *Store) TouchToken(ctx context.Context, tenant, id string, at time.Time) (bool, error) {
	res, err := s.w.ExecContext(ctx, `UPDATE api_tokens SET last_used_at = ?
		WHERE tenant_id = ? AND token_id = ? AND (last_used_at IS NULL OR last_used_at <= ?)`,
		micros(at), tenant, id, micros(at.Add(-ledger.TouchEvery)))
	if err != nil {
		return false, fmt.Errorf("touch token: %w", err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
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
