package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"settle/ledger"
	"settle/ledger/postgres/internal/dbsqlc"
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
	applied, err := dbsqlc.New(pool).SchemaVersionsApplied(ctx)
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "42P01" { // undefined_table
			return s, nil
		}
		return s, fmt.Errorf("read schema version: %w", err)
	}
	s.Applied = applied
	return s, nil
}
