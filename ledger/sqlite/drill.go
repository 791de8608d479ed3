package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"

	"settle/ledger"
	"settle/migrations"
)

var _ ledger.DrillStore = (*Store)(nil)

// RecordDrill implements ledger.DrillStore.
func (s *Store) RecordDrill(ctx context.Context, results []ledger.DrillResult) error {
	if err := ledger.ValidateDrill(results); err != nil {
		return err
	}
	now := s.clock()
	return s.inTx(ctx, func(tx *sql.Tx) error {
		for _, r := range results {
			ev, err := json.Marshal(orEmpty(r.Evidence))
			if err != nil {
				return fmt.Errorf("record drill: evidence: %w", err)
			}
			at := now
			if !r.RanAt.IsZero() {
				at = r.RanAt
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO drill_results (run_id, target, test_number, test_name,
				passed, not_applicable, reason, evidence, ran_at, settle_version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				r.RunID, r.Target, r.Number, r.Name, r.Passed, r.NotApplicable, r.Reason, string(ev), micros(at), r.Version); err != nil {
				return fmt.Errorf("record drill: %w", err)
			}
		}
		return nil
	})
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// LatestDrill implements ledger.DrillStore.
func (s *Store) LatestDrill(ctx context.Context, target string) ([]ledger.DrillResult, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT run_id, target, test_number, test_name, passed, not_applicable,
		reason, evidence, ran_at, settle_version FROM drill_results
		WHERE run_id = (SELECT run_id FROM drill_results WHERE target = ?1 ORDER BY ran_at DESC, run_id DESC LIMIT 1)
		ORDER BY test_number`, target)
	if err != nil {
		return nil, fmt.Errorf("latest drill: %w", err)
	}
	defer rows.Close()
	var out []ledger.DrillResult
	for rows.Next() {
		var (
			r  ledger.DrillResult
			ev string
			at int64
		)
		if err := rows.Scan(&r.RunID, &r.Target, &r.Number, &r.Name, &r.Passed, &r.NotApplicable,
			&r.Reason, &ev, &at, &r.Version); err != nil {
			return nil, fmt.Errorf("latest drill: %w", err)
		}
		if err := json.Unmarshal([]byte(ev), &r.Evidence); err != nil {
			return nil, fmt.Errorf("latest drill: evidence: %w", err)
		}
		r.RanAt = fromMicros(at)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("latest drill: %w", err)
	}
	if len(out) == 0 {
		return nil, ledger.Errorf(ledger.ENotFound, "target %s was never drilled", target)
	}
	return out, nil
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
