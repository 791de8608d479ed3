package postgres_test

import (
	"testing"

	"settle/ledger/ledgertest"
	"settle/ledger/storetest"
)

func TestStore(t *testing.T) {
	t.Parallel()
	ledgertest.Run(t, storetest.Postgres())
}

func BenchmarkStore(b *testing.B) {
	ledgertest.Bench(b, storetest.Postgres())
}
