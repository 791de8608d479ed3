package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"settle/ledger"
	"settle/migrations"
)

// Schema reads which migrations the database at pool has applied, from
// goose's table, without changing anything: a command that only reads and
// writes the ledger needs no right to create tables. A database without
// the table has none applied.
func Schema(ctx context.Context, pool *pgxpool.Pool) (ledger.Schema, error) {
	s := ledger.Schema{Known: migrations.PostgresVersions()}
	// Goose records an applied migration as a row with is_applied; going
	// down deletes the row.
	rows, err := pool.Query(ctx, `SELECT DISTINCT version_id FROM goose_db_version
		WHERE is_applied AND version_id > 0 ORDER BY version_id`)
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "42P01" { // undefined_table
			return s, nil
		}
		return s, fmt.Errorf("read schema version: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			return s, fmt.Errorf("read schema version: %w", err)
		}
		s.Applied = append(s.Applied, v)
	}
	if err := rows.Err(); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "42P01" {
			return s, nil
		}
		return s, fmt.Errorf("read schema version: %w", err)
	}
	return s, nil
}
