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
	if err := s.r.QueryRowContext(ctx, `SELECT COALESCE(MAX(version_id), 0) FROM goose_db_version WHERE is_applied`).
		Scan(&f.Version); err != nil {
		return f, fmt.Errorf("schema facts: version: %w", err)
	}
	cols, err := s.r.QueryContext(ctx, `SELECT name FROM pragma_table_info('operation_ledger')`)
	if err != nil {
		return f, fmt.Errorf("schema facts: columns: %w", err)
	}
	defer cols.Close()
	for cols.Next() {
		var name string
		if err := cols.Scan(&name); err != nil {
			return f, fmt.Errorf("schema facts: columns: %w", err)
		}
		switch name {
		case "payload_hash":
			f.PayloadHash = true
		case "fence_token":
			f.Fence = true
		case "lease_expires_at":
			f.Lease = true
		}
	}
	if err := cols.Err(); err != nil {
		return f, fmt.Errorf("schema facts: columns: %w", err)
	}
	// An index's columns come from pragma_index_info, one row per column;
	// a unique index over exactly the three is the identity constraint.
	idx, err := s.r.QueryContext(ctx, `SELECT il.name, ii.name FROM pragma_index_list('operation_ledger') il,
		pragma_index_info(il.name) ii WHERE il."unique" = 1 AND il.partial = 0 ORDER BY il.name, ii.name`)
	if err != nil {
		return f, fmt.Errorf("schema facts: indexes: %w", err)
	}
	defer idx.Close()
	byIndex := map[string][]string{}
	var order []string
	for idx.Next() {
		var index, col string
		if err := idx.Scan(&index, &col); err != nil {
			return f, fmt.Errorf("schema facts: indexes: %w", err)
		}
		if _, ok := byIndex[index]; !ok {
			order = append(order, index)
		}
		byIndex[index] = append(byIndex[index], col)
	}
	if err := idx.Err(); err != nil {
		return f, fmt.Errorf("schema facts: indexes: %w", err)
	}
	for _, index := range order {
		if slices.Equal(byIndex[index], []string{"intent_ref", "operation_type", "tenant_id"}) {
			f.IntentUnique, f.Index = true, index
			break
		}
	}
	return f, nil
}
