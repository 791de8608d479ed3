package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"settle/ledger"
	"settle/ledger/postgres/internal/dbsqlc"
)

// driver is PostgreSQL's ledger.Driver: the queries sqlc compiles from
// internal/dbsqlc/*.sql, run on the store's pool.
type driver struct {
	pool *pgxpool.Pool
	q    *dbsqlc.Queries
}

var _ ledger.Driver = driver{}

func newDriver(pool *pgxpool.Pool) driver { return driver{pool: pool, q: dbsqlc.New(pool)} }

// inTx runs fn with the queries bound to one transaction, committed when
// fn returns nil.
func (d driver) inTx(ctx context.Context, fn func(q *dbsqlc.Queries) error) error {
	return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error { return fn(d.q.WithTx(tx)) })
}
