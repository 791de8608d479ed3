package postgres_test

import (
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/postgres"
	"settle/ledger/postgres/pgtest"
)

// harness makes each store over its own fresh schema; siblings get their
// own pools over the same schema.
func harness() ledgertest.Harness {
	configs := map[ledger.Store]*pgxpool.Config{}
	return ledgertest.Harness{
		New: func(t testing.TB, clk *ledgertest.Clock) ledger.Store {
			cfg := pgtest.Schema(t)
			s := postgres.New(pgtest.Pool(t, cfg), clk.Now)
			configs[s] = cfg
			return s
		},
		Sibling: func(t testing.TB, s ledger.Store, clk *ledgertest.Clock) ledger.Store {
			return postgres.New(pgtest.Pool(t, configs[s]), clk.Now)
		},
	}
}

func TestStore(t *testing.T) {
	ledgertest.Run(t, harness())
}

func BenchmarkStore(b *testing.B) {
	ledgertest.Bench(b, harness())
}
