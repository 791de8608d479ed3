package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

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
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for _, r := range results {
			ev := r.Evidence
			if ev == nil {
				ev = map[string]any{}
			}
			raw, err := json.Marshal(ev)
			if err != nil {
				return fmt.Errorf("evidence: %w", err)
			}
			at := now
			if !r.RanAt.IsZero() {
				at = r.RanAt
			}
			if _, err := tx.Exec(ctx, `INSERT INTO drill_results (run_id, target, test_number, test_name, passed,
				not_applicable, reason, evidence, ran_at, settle_version) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
				r.RunID, r.Target, r.Number, r.Name, r.Passed, r.NotApplicable, r.Reason, raw, at, r.Version); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record drill: %w", err)
	}
	return nil
}

// LatestDrill implements ledger.DrillStore.
func (s *Store) LatestDrill(ctx context.Context, target string) ([]ledger.DrillResult, error) {
	rows, err := s.pool.Query(ctx, `SELECT run_id, target, test_number, test_name, passed, not_applicable,
		reason, evidence, ran_at, settle_version FROM drill_results
		WHERE run_id = (SELECT run_id FROM drill_results WHERE target = $1 ORDER BY ran_at DESC, run_id DESC LIMIT 1)
		ORDER BY test_number`, target)
	if err != nil {
		return nil, fmt.Errorf("latest drill: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ledger.DrillResult, error) {
		var (
			r  ledger.DrillResult
			ev []byte
		)
		err := row.Scan(&r.RunID, &r.Target, &r.Number, &r.Name, &r.Passed, &r.NotApplicable,
			&r.Reason, &ev, &r.RanAt, &r.Version)
		if err == nil {
			err = json.Unmarshal(ev, &r.Evidence)
		}
		r.RanAt = r.RanAt.UTC()
		return r, err
	})
	if err != nil {
		return nil, fmt.Errorf("latest drill: %w", err)
	}
	if len(out) == 0 {
		return nil, ledger.Errorf(ledger.ENotFound, "target %s was never drilled", target)
	}
	return out, nil
}

// SchemaFacts implements ledger.DrillStore. It reads the catalog of the
// schema the connection works in, so that a deployment with its own
// search_path is judged by its own tables.
func (s *Store) SchemaFacts(ctx context.Context) (ledger.SchemaFacts, error) {
	f := ledger.SchemaFacts{Latest: slices.Max(migrations.PostgresVersions())}
	if err := s.pool.QueryRow(ctx, `SELECT COALESCE(MAX(version_id), 0) FROM goose_db_version WHERE is_applied`).
		Scan(&f.Version); err != nil {
		return f, fmt.Errorf("schema facts: version: %w", err)
	}
	if err := s.pool.QueryRow(ctx, `SELECT
			COALESCE(bool_or(column_name = 'payload_hash'), false),
			COALESCE(bool_or(column_name = 'fence_token'), false),
			COALESCE(bool_or(column_name = 'lease_expires_at'), false)
		FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = 'operation_ledger'`).
		Scan(&f.PayloadHash, &f.Fence, &f.Lease); err != nil {
		return f, fmt.Errorf("schema facts: columns: %w", err)
	}
	err := s.pool.QueryRow(ctx, `SELECT i.relname FROM pg_index x
			JOIN pg_class i ON i.oid = x.indexrelid
			JOIN pg_class t ON t.oid = x.indrelid
		WHERE t.relname = 'operation_ledger' AND t.relnamespace = current_schema()::regnamespace
			AND x.indisunique AND x.indpred IS NULL
			AND (SELECT array_agg(a.attname::text ORDER BY a.attname::text) FROM pg_attribute a
				WHERE a.attrelid = t.oid AND a.attnum = ANY(x.indkey))
				= ARRAY['intent_ref', 'operation_type', 'tenant_id']
		ORDER BY i.relname LIMIT 1`).Scan(&f.Index)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return f, fmt.Errorf("schema facts: indexes: %w", err)
	default:
		f.IntentUnique = true
	}
	return f, nil
}
