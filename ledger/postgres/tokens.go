package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"settle/ledger"
)

var _ ledger.TokenStore = (*Store)(nil)

// CreateToken implements ledger.TokenStore.
func (s *Store) CreateToken(ctx context.Context, t ledger.Token) error {
	if err := ledger.ValidateTokenName(t.Name); err != nil {
		return err
	}
	err := s.withAction(ctx, ledger.ActionTokenCreate, t.Tenant, t.ID, func(tx pgx.Tx, _ *ledger.Action) error {
		// The tenant must be known; FOR KEY SHARE holds it against an
		// erasure deleting it before this commits.
		var known bool
		err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM tenants WHERE tenant_id = $1 FOR KEY SHARE)`,
			t.Tenant).Scan(&known)
		if err != nil {
			return err
		}
		if !known {
			return ledger.UnknownTenant(t.Tenant)
		}
		_, err = tx.Exec(ctx, `INSERT INTO api_tokens (token_id, tenant_id, name, token_hash, created_at)
			VALUES ($1, $2, $3, $4, $5)`, t.ID, t.Tenant, t.Name, t.Hash, t.CreatedAt)
		return err
	})
	if err != nil {
		return fmt.Errorf("create token: %w", err)
	}
	return nil
}

// TokenByHash implements ledger.TokenStore.
func (s *Store) TokenByHash(ctx context.Context, hash []byte) (ledger.Token, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+tokenCols+`
		FROM api_tokens WHERE token_hash = $1`, hash)
	if err != nil {
		return ledger.Token{}, fmt.Errorf("token: %w", err)
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

// ListTokens implements ledger.TokenStore.
func (s *Store) ListTokens(ctx context.Context, tenant string) ([]ledger.Token, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+tokenCols+`
		FROM api_tokens WHERE tenant_id = $1 ORDER BY created_at DESC, token_id`, tenant)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	ts, err := pgx.CollectRows(rows, scanToken)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	return ts, nil
}

// RevokeToken implements ledger.TokenStore.
func (s *Store) RevokeToken(ctx context.Context, tenant, id string, at time.Time) error {
	if !ledger.ValidTokenID(id) {
		return ledger.Errorf(ledger.ENotFound, "token not found")
	}
	err := s.withAction(ctx, ledger.ActionTokenRevoke, tenant, id, func(tx pgx.Tx, _ *ledger.Action) error {
		tag, err := tx.Exec(ctx, `UPDATE api_tokens SET revoked_at = coalesce(revoked_at, $3)
			WHERE tenant_id = $1 AND token_id = $2`, tenant, id, at)
		if err == nil && tag.RowsAffected() == 0 {
			return ledger.Errorf(ledger.ENotFound, "token not found")
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("revoke token: %w", err)
	}
	return nil
}

// TouchToken implements ledger.TokenStore.
func (s *Store) TouchToken(ctx context.Context, tenant, id string, at time.Time) (bool, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE api_tokens SET last_used_at = $3
		WHERE tenant_id = $1 AND token_id = $2 AND (last_used_at IS NULL OR last_used_at <= $4)`,
		tenant, id, at, at.Add(-ledger.TouchEvery))
	if err != nil {
		return false, fmt.Errorf("touch token: %w", err)
	}
	return tag.RowsAffected() > 0, nil
}

const tokenCols = `token_id, tenant_id, name, token_hash, created_at, revoked_at, last_used_at`

func scanToken(row pgx.CollectableRow) (ledger.Token, error) {
	var t ledger.Token
	err := row.Scan(&t.ID, &t.Tenant, &t.Name, &t.Hash, &t.CreatedAt, &t.RevokedAt, &t.LastUsedAt)
	t.CreatedAt = t.CreatedAt.UTC()
	utcp(t.RevokedAt)
	utcp(t.LastUsedAt)
	return t, err
}
