package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/sqlite"
)

// harness opens each store on a fresh file; a sibling is a second Store
// (its own connections) on the same file, like a second process.
func harness() ledgertest.Harness {
	paths := map[ledger.Store]string{}
	open := func(t testing.TB, path string, clk *ledgertest.Clock) ledger.Store {
		s, err := sqlite.Open(context.Background(), path, clk.Now)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		paths[s] = path
		return s
	}
	return ledgertest.Harness{
		New: func(t testing.TB, clk *ledgertest.Clock) ledger.Store {
			return open(t, filepath.Join(t.TempDir(), "settle.db"), clk)
		},
		Sibling: func(t testing.TB, s ledger.Store, clk *ledgertest.Clock) ledger.Store {
			return open(t, paths[s], clk)
		},
	}
}

func TestStore(t *testing.T) {
	ledgertest.Run(t, harness())
}

func BenchmarkStore(b *testing.B) {
	ledgertest.Bench(b, harness())
}
