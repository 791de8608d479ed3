package postgres_test

import (
	"testing"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/postgres"
	"settle/ledger/storetest"
)

func TestStore(t *testing.T) {
	t.Parallel()
	ledgertest.Run(t, storetest.Postgres())
}

func BenchmarkStore(b *testing.B) {
	ledgertest.Bench(b, storetest.Postgres())
}

// BenchmarkGroupCommit: 32 concurrent creators, one commit each against
// group commit, in one run.
func BenchmarkGroupCommit(b *testing.B) {
	ledgertest.BenchGroupCommit(b, storetest.Postgres(), func(s ledger.Store) ledgertest.Creator {
		return postgres.OneByOne(s.(*postgres.Store))
	})
}
