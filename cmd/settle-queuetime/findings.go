package main

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"settle/ledger"
)

// The findings' share of the measure: one audit finding per seeded
// operation (so n of them, found one a second in the operations' order),
// kinds in turn duplicate, loss, phantom as the auditor writes them (a
// duplicate names two object ids, a phantom one, a loss none; loss and
// phantom escalated), one in ten already acknowledged, read through
// ReviewStore.ListFindings with the filter /findings builds, 50 a page
// (and one more, to know there is a next page).

// findingStore is what the findings' measure reads.
type findingStore interface {
	ListFindings(ctx context.Context, f ledger.FindingFilter) ([]ledger.Finding, error)
}

// findingSeed is the finding of the seeded operation of row number i
// (1 the oldest) with created_at t, in either dialect (jsonb is
// PostgreSQL's cast of the evidence, "" SQLite's): the columns
// RecordFinding and AcknowledgeFinding write.
func findingSeed(jsonb string) string {
	return `CASE i % 3 WHEN 0 THEN 'duplicate' WHEN 1 THEN 'loss' ELSE 'phantom' END,
	CASE i % 3 WHEN 0 THEN '["ch_perf_' || i || '","ch_perf_' || i || '_b"]' WHEN 1 THEN '[]'
		ELSE '["ch_perf_' || i || '"]' END,
	CASE i % 3 WHEN 0 THEN '{"objects":2}' WHEN 1 THEN '{"lookup":"not_found"}' ELSE '{"objects":1}' END` + jsonb + `,
	t, i % 3 <> 0,
	CASE WHEN i % 10 = 0 THEN t END, CASE WHEN i % 10 = 0 THEN 'perf:ada' ELSE '' END,
	CASE WHEN i % 10 = 0 THEN 'Ada' ELSE '' END, CASE WHEN i % 10 = 0 THEN 'refund under way' ELSE '' END`
}

const findingSeedCols = `tenant_id, operation_id, target, kind, remote_ids, evidence, found_at, escalated,
	acknowledged_at, acknowledged_by, acknowledged_by_name, acknowledgement`

// seedFindingsPostgres writes a finding for each of the tenant's
// operations, oldest first so that ids grow with found_at.
func seedFindingsPostgres(ctx context.Context, pool *pgxpool.Pool, tenant string) error {
	_, err := pool.Exec(ctx, `INSERT INTO audit_findings (`+findingSeedCols+`)
		SELECT tenant_id, operation_id, target, `+findingSeed("::jsonb")+`
		FROM (SELECT tenant_id, operation_id, target, created_at AS t,
			row_number() OVER (ORDER BY created_at, operation_id) AS i
			FROM operation_ledger WHERE tenant_id = $1) AS o
		ORDER BY i`, tenant)
	return err
}

// seedFindingsSQLite writes a finding for each of the tenant's
// operations, oldest first so that ids grow with found_at.
func seedFindingsSQLite(ctx context.Context, db *sql.DB, tenant string) error {
	_, err := db.ExecContext(ctx, `INSERT INTO audit_findings (`+findingSeedCols+`)
		SELECT tenant_id, operation_id, target, `+findingSeed("")+`
		FROM (SELECT tenant_id, operation_id, target, created_at AS t,
			row_number() OVER (ORDER BY created_at, operation_id) AS i
			FROM operation_ledger WHERE tenant_id = ?1) AS o
		ORDER BY i`, tenant)
	return err
}

// measureFindings prints the findings' measures; explain, when set, gives
// the plan of the last statement, printed for the open first page and the
// search by object id.
func measureFindings(ctx context.Context, st findingStore, tenant string, n, runs int, anchor time.Duration,
	explain func(context.Context) ([]string, error)) error {
	newest, err := st.ListFindings(ctx, ledger.FindingFilter{Open: true, Tenants: []string{tenant}, Limit: 1})
	if err != nil || len(newest) == 0 {
		return fmt.Errorf("findings: newest: %v", err)
	}
	// One insert gave the ids in found_at order: nine tenths down the
	// list is the newest id less nine tenths of the findings (the newest
	// open one is the newest or the one before).
	deep := newest[0].ID - int64(n)*9/10
	open := func(f ledger.FindingFilter) ledger.FindingFilter {
		f.Open, f.Tenants, f.Limit = true, []string{tenant}, quarantinePage+1
		return f
	}
	// A duplicate's (i % 3 = 0) second object near the middle: the id a
	// customer quotes from the second charge.
	dup := (n / 2 / 3) * 3
	if dup%10 == 0 {
		dup += 3 // acknowledged: not in the open list
	}
	measures := []struct {
		name    string
		f       ledger.FindingFilter
		explain bool
	}{
		{"open, first page", open(ledger.FindingFilter{}), true},
		{"open, deep page (after the 90% mark)", open(ledger.FindingFilter{After: deep}), false},
		{"open, one target", open(ledger.FindingFilter{Target: "transfers"}), false},
		{"open, one kind", open(ledger.FindingFilter{Kind: ledger.FindingLoss}), false},
		{"open, search by object id", open(ledger.FindingFilter{Ref: fmt.Sprintf("ch_perf_%d_b", dup)}), true},
		{"open, search by operation id prefix", open(ledger.FindingFilter{Ref: newest[0].OperationID[:8]}), true},
		{"acknowledged, first page", ledger.FindingFilter{Resolved: true, Tenants: []string{tenant}, Limit: quarantinePage + 1}, false},
	}
	fmt.Println("findings (ReviewStore.ListFindings, as /findings)")
	for _, m := range measures {
		if _, err := measure(m.name, runs, anchor, func() (int, error) {
			fs, err := st.ListFindings(ctx, m.f)
			return min(len(fs), quarantinePage), err
		}); err != nil {
			return err
		}
		if m.explain && explain != nil {
			plan, err := explain(ctx)
			if err != nil {
				return fmt.Errorf("explain: %w", err)
			}
			fmt.Printf("    plan of %q:\n", m.name)
			for _, l := range plan {
				fmt.Println("      " + l)
			}
		}
	}
	return nil
}
