package sqlite_test

import (
	"testing"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/sqlite"
	"settle/ledger/storetest"
)

func TestStore(t *testing.T) {
	t.Parallel()
	ledgertest.Run(t, storetest.SQLite())
}

func BenchmarkStore(b *testing.B) {
	ledgertest.Bench(b, storetest.SQLite())
}

// BenchmarkGroupCommit: 32 concurrent creators, one commit each against
// group commit, in one run.
func BenchmarkGroupCommit(b *testing.B) {
	ledgertest.BenchGroupCommit(b, storetest.SQLite(), func(s ledger.Store) ledgertest.Creator {
		return sqlite.OneByOne(s.(*sqlite.Store))
	})
}
