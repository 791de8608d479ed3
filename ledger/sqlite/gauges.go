package sqlite

import (
	"context"
	"fmt"
	"time"

	"settle/ledger"
)

var _ ledger.GaugeStore = (*Store)(nil)

// Gauges implements ledger.GaugeStore in one statement, through the
// partial indexes that leave out the SUCCEEDED bulk and resolved
// quarantine items.
func (s *Store) Gauges(ctx context.Context, now time.Time) (ledger.Gauges, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT 'op', tenant_id, target, state, count(*),
			count(CASE WHEN state = 'UNKNOWN' AND next_reconcile_at <= ?1 THEN 1 END),
			count(CASE WHEN state = 'UNKNOWN' AND deadline <= ?1 THEN 1 END), min(updated_at)
		FROM operation_ledger
		WHERE state <> 'SUCCEEDED' AND state IN ('PREPARED', 'IN_FLIGHT', 'UNKNOWN', 'ESCALATED')
		GROUP BY tenant_id, target, state
		UNION ALL
		SELECT 'quarantine', scope_tenant, target,
			CASE WHEN EXISTS (SELECT 1 FROM operation_ledger o WHERE o.tenant_id = quarantine.scope_tenant)
				THEN 'known' ELSE '' END,
			count(*), 0, 0, min(quarantined_at)
		FROM quarantine WHERE resolved_at IS NULL
		GROUP BY scope_tenant, target`, micros(now))
	if err != nil {
		return ledger.Gauges{}, fmt.Errorf("gauges: %w", err)
	}
	defer rows.Close()
	var g ledger.Gauges
	for rows.Next() {
		var (
			kind, tenant, target, state string
			n, due, overdue             int
			oldest                      int64
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
			Count: n, Due: due, Overdue: overdue, Oldest: fromMicros(oldest)})
	}
	if err := rows.Err(); err != nil {
		return ledger.Gauges{}, fmt.Errorf("gauges: %w", err)
	}
	return g, nil
}
