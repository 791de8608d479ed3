package postgres

import (
	"context"
	"fmt"
	"time"

	"settle/ledger"
)

var _ ledger.GaugeStore = (*Store)(nil)

// Gauges implements ledger.GaugeStore in one statement. The live states
// are read through a partial index whose predicate leaves out the
// SUCCEEDED bulk (operation_ledger_state_created), the open quarantine
// through quarantine_open (TestPlans checks both).
func (s *Store) Gauges(ctx context.Context, now time.Time) (ledger.Gauges, error) {
	rows, err := s.pool.Query(ctx, `SELECT 'op', tenant_id, target, state, count(*),
			count(*) FILTER (WHERE state = 'UNKNOWN' AND next_reconcile_at <= $1),
			count(*) FILTER (WHERE state = 'UNKNOWN' AND deadline <= $1), min(updated_at)
		FROM operation_ledger
		WHERE state <> 'SUCCEEDED' AND state IN ('PREPARED', 'IN_FLIGHT', 'UNKNOWN', 'ESCALATED')
		GROUP BY tenant_id, target, state
		UNION ALL
		SELECT 'quarantine', scope_tenant, target,
			CASE WHEN EXISTS (SELECT 1 FROM operation_ledger o WHERE o.tenant_id = quarantine.scope_tenant)
				THEN 'known' ELSE '' END,
			count(*), 0, 0, min(quarantined_at)
		FROM quarantine WHERE resolved_at IS NULL
		GROUP BY scope_tenant, target`, now)
	if err != nil {
		return ledger.Gauges{}, fmt.Errorf("gauges: %w", err)
	}
	defer rows.Close()
	var g ledger.Gauges
	for rows.Next() {
		var (
			kind, tenant, target, state string
			n, due, overdue             int
			oldest                      time.Time
		)
		if err := rows.Scan(&kind, &tenant, &target, &state, &n, &due, &overdue, &oldest); err != nil {
			return ledger.Gauges{}, fmt.Errorf("gauges: %w", err)
		}
		if kind == "quarantine" {
			// The state column says whether the scope tenant exists.
			g.Quarantine = append(g.Quarantine, ledger.QuarantineGauge{Tenant: tenant, Target: target, Count: n,
				Known: state == "known"})
			continue
		}
		g.States = append(g.States, ledger.StateGauge{Tenant: tenant, Target: target, State: ledger.State(state),
			Count: n, Due: due, Overdue: overdue, Oldest: oldest.UTC()})
	}
	if err := rows.Err(); err != nil {
		return ledger.Gauges{}, fmt.Errorf("gauges: %w", err)
	}
	return g, nil
}
