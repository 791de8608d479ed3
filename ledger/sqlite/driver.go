package sqlite

import (
	"settle/ledger"
	"settle/ledger/sqlite/internal/dbsqlc"
)

// driver is SQLite's ledger.Driver: the queries sqlc compiles from
// internal/dbsqlc/*.sql, writes on the single writer and reads on the
// readers.
type driver struct {
	w, r *dbsqlc.Queries
}

var _ ledger.Driver = driver{}
