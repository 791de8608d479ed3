package sqlite

import (
	"context"
	"fmt"
	"slices"

	"settle/ledger"
	"settle/ledger/sqlite/internal/dbsqlc"
	"settle/migrations"
)

var _ ledger.DrillStore = (*Store)(nil)

// DrillInsert implements ledger.DrillDriver.
func (d driver) DrillInsert(ctx context.Context, rows []ledger.DrillRow) error {
	return d.inTx(ctx, func(q *dbsqlc.Queries) error {
		for _, r := range rows {
			if err := q.DrillInsert(ctx, dbsqlc.DrillInsertParams{RunID: r.RunID, Target: r.Target,
				TestNumber: int64(r.Number), TestName: r.Name, Passed: r.Passed, NotApplicable: r.NotApplicable,
				Reason: r.Reason, Evidence: string(r.Evidence), RanAt: micros(r.RanAt), SettleVersion: r.Version}); err != nil {
				return err
			}
		}
		return nil
	})
}

// DrillLatest implements ledger.DrillDriver.
func (d driver) DrillLatest(ctx context.Context, target string) ([]ledger.DrillRow, error) {
	rows, err := d.r.DrillLatest(ctx, target)
	out := make([]ledger.DrillRow, len(rows))
	for i, r := range rows {
		out[i] = ledger.DrillRow{RunID: r.RunID, Target: r.Target, Number: int(r.TestNumber), Name: r.TestName,
			Passed: r.Passed, NotApplicable: r.NotApplicable, Reason: r.Reason, Evidence: []byte(r.Evidence),
			RanAt: fromMicros(r.RanAt), Version: r.SettleVersion}
	}
	return out, err
}

// SchemaFacts implements ledger.DrillStore.
func (s *Store) SchemaFacts(ctx context.Context) (ledger.SchemaFacts, error) {
	f := ledger.SchemaFacts{Latest: slices.Max(migrations.SQLiteVersions())}
	q := dbsqlc.New(s.r)
	var err error
	if f.Version, err = q.SchemaVersionLatest(ctx); err != nil {
		return f, fmt.Errorf("schema facts: version: %w", err)
	}
	names, err := q.LedgerColumnNames(ctx)
	if err != nil {
		return f, fmt.Errorf("schema facts: columns: %w", err)
	}
	f.PayloadHash, f.Fence, f.Lease = slices.Contains(names, "payload_hash"), slices.Contains(names, "fence_token"),
		slices.Contains(names, "lease_expires_at")
	cols, err := q.LedgerUniqueIndexColumns(ctx)
	if err != nil {
		return f, fmt.Errorf("schema facts: indexes: %w", err)
	}
	byIndex := map[string][]string{}
	var order []string
	for _, c := range cols {
		if _, ok := byIndex[c.IndexName]; !ok {
			order = append(order, c.IndexName)
		}
		byIndex[c.IndexName] = append(byIndex[c.IndexName], c.ColumnName)
	}
	for _, index := range order {
		if slices.Equal(byIndex[index], []string{"intent_ref", "operation_type", "tenant_id"}) {
			f.IntentUnique, f.Index = true, index
			break
		}
	}
	return f, nil
}
