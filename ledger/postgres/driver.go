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
	db   dbsqlc.DBTX // the pool or the transaction, for the statements not yet in sqlc
	q    *dbsqlc.Queries
	tx   bool // q runs in a transaction of WithTx
}

var _ ledger.Driver = driver{}

func newDriver(pool *pgxpool.Pool) driver {
	db := planned{pool}
	return driver{pool: pool, db: db, q: dbsqlc.New(db)}
}

// txDriver is the driver inside a transaction the caller holds.
func txDriver(tx dbsqlc.DBTX) driver {
	db := planned{tx}
	return driver{db: db, q: dbsqlc.New(db), tx: true}
}

// inTx runs fn with the queries bound to one transaction, committed when
// fn returns nil.
func (d driver) inTx(ctx context.Context, fn func(q *dbsqlc.Queries) error) error {
	return d.WithTx(ctx, func(tx ledger.Driver) error { return fn(tx.(driver).q) })
}

// WithTx implements ledger.Driver.
func (d driver) WithTx(ctx context.Context, fn func(tx ledger.Driver) error) error {
	if d.tx {
		return fn(d)
	}
	return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		db := planned{tx}
		return fn(driver{pool: d.pool, db: db, q: dbsqlc.New(db), tx: true})
	})
}
