package postgres

import (
	"context"
	"fmt"
	"slices"

	"settle/ledger"
	"settle/ledger/postgres/internal/dbsqlc"
	"settle/migrations"
)

var _ ledger.DrillStore = (*Store)(nil)

// DrillInsert implements ledger.DrillDriver.
func (d driver) DrillInsert(ctx context.Context, rows []ledger.DrillRow) error {
	return d.inTx(ctx, func(q *dbsqlc.Queries) error {
		for _, r := range rows {
			if err := q.DrillInsert(ctx, dbsqlc.DrillInsertParams{RunID: r.RunID, Target: r.Target,
				TestNumber: int32(r.Number), TestName: r.Name, Passed: r.Passed, NotApplicable: r.NotApplicable,
				Reason: r.Reason, Evidence: r.Evidence, RanAt: r.RanAt, SettleVersion: r.Version}); err != nil {
				return err
			}
		}
		return nil
	})
}

// DrillLatest implements ledger.DrillDriver.
func (d driver) DrillLatest(ctx context.Context, target string) ([]ledger.DrillRow, error) {
	rows, err := d.q.DrillLatest(ctx, target)
	out := make([]ledger.DrillRow, len(rows))
	for i, r := range rows {
		out[i] = ledger.DrillRow{RunID: r.RunID, Target: r.Target, Number: int(r.TestNumber), Name: r.TestName,
			Passed: r.Passed, NotApplicable: r.NotApplicable, Reason: r.Reason, Evidence: r.Evidence,
			RanAt: r.RanAt, Version: r.SettleVersion}
	}
	return out, err
}

// SchemaFacts implements ledger.DrillStore. It reads the catalog of the
// schema the connection works in, so that a deployment with its own
// search_path is judged by its own tables.
func (s *Store) SchemaFacts(ctx context.Context) (ledger.SchemaFacts, error) {
	f := ledger.SchemaFacts{Latest: slices.Max(migrations.PostgresVersions())}
	q := dbsqlc.New(s.pool)
	var err error
	if f.Version, err = q.SchemaVersionLatest(ctx); err != nil {
		return f, fmt.Errorf("schema facts: version: %w", err)
	}
	cols, err := q.LedgerColumnFacts(ctx)
	if err != nil {
		return f, fmt.Errorf("schema facts: columns: %w", err)
	}
	f.PayloadHash, f.Fence, f.Lease = cols.PayloadHash, cols.FenceToken, cols.LeaseExpiresAt
	index, err := q.LedgerIntentIndex(ctx)
	if err != nil {
		return f, fmt.Errorf("schema facts: indexes: %w", err)
	}
	if len(index) > 0 {
		f.IntentUnique, f.Index = true, index[0]
	}
	return f, nil
}
