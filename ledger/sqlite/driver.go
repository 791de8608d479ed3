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
	wc     *stmtCache  // the writer's prepared statements; nil: none kept
	x      dbsqlc.DBTX // the writer or its transaction, for the statements not yet in sqlc
	rx     dbsqlc.DBTX // the readers or the writer's transaction: what r runs on
	w, r   *dbsqlc.Queries
	tx     bool // w and r run in the writer's transaction of WithTx
}

var _ ledger.Driver = driver{}

// newDriver returns the driver over the writer and the readers, with
// their caches of prepared statements (stmtCache); nil caches prepare
// every statement again on each call, as database/sql does by itself.
func newDriver(w, r *sql.DB, wc, rc *stmtCache) driver {
	var x, rx dbsqlc.DBTX = w, r
	if wc != nil {
		x = cachedDB{wc}
	}
	if rc != nil {
		rx = cachedDB{rc}
	}
	return driver{writer: w, wc: wc, x: x, rx: rx, w: dbsqlc.New(x), r: dbsqlc.New(rx)}
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
	var x dbsqlc.DBTX = tx
	if d.wc != nil {
		x = cachedTx{tx: tx, c: d.wc}
	}
	q := dbsqlc.New(x)
	if err := fn(driver{writer: d.writer, wc: d.wc, x: x, rx: x, w: q, r: q, tx: true}); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if d.wc != nil {
		d.wc.prepareWanted(ctx)
	}
	return nil
}
