package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

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
