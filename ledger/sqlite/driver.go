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
	w, r   *dbsqlc.Queries
}

var _ ledger.Driver = driver{}

func newDriver(w, r *sql.DB) driver { return driver{writer: w, w: dbsqlc.New(w), r: dbsqlc.New(r)} }

// inTx runs fn with the writer's queries bound to one transaction,
// committed when fn returns nil.
func (d driver) inTx(ctx context.Context, fn func(q *dbsqlc.Queries) error) error {
	tx, err := d.writer.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(d.w.WithTx(tx)); err != nil {
		return err
	}
	return tx.Commit()
}
