package sqlite

import (
	"context"
	"database/sql"

	"settle/ledger"
	"settle/ledger/sqlite/internal/dbsqlc"
)

// driver is SQLite's ledger.Driver: the queries sqlc compiles from
// internal/dbsqlc/*.sql, writes on the single writer and reads on the
// readers.
type driver struct {
	writer *sql.DB
	x      dbsqlc.DBTX // the writer or its transaction, for the statements not yet in sqlc
	rx     dbsqlc.DBTX // the readers or the writer's transaction: what r runs on
	w, r   *dbsqlc.Queries
	tx     bool // w and r run in the writer's transaction of WithTx
}

var _ ledger.Driver = driver{}

func newDriver(w, r *sql.DB) driver {
	return driver{writer: w, x: w, rx: r, w: dbsqlc.New(w), r: dbsqlc.New(r)}
}

// inTx runs fn with the writer's queries bound to one transaction,
// committed when fn returns nil.
func (d driver) inTx(ctx context.Context, fn func(q *dbsqlc.Queries) error) error {
	return d.WithTx(ctx, func(tx ledger.Driver) error { return fn(tx.(driver).w) })
}

// WithTx implements ledger.Driver. Reads inside it go through the
// writer's transaction too, so they see its writes.
func (d driver) WithTx(ctx context.Context, fn func(tx ledger.Driver) error) error {
	if d.tx {
		return fn(d)
	}
	tx, err := d.writer.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	q := d.w.WithTx(tx)
	if err := fn(driver{writer: d.writer, x: tx, rx: tx, w: q, r: q, tx: true}); err != nil {
		return err
	}
	return tx.Commit()
}
