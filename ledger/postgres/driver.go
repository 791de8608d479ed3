package postgres

import (
	"settle/ledger"
	"settle/ledger/postgres/internal/dbsqlc"
)

// driver is PostgreSQL's ledger.Driver: the queries sqlc compiles from
// internal/dbsqlc/*.sql, run on the store's pool.
type driver struct {
	q *dbsqlc.Queries
}

var _ ledger.Driver = driver{}
