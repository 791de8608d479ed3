package sqlite

import (
	"context"
	"fmt"
	"time"

	"settle/ledger"
)

var _ ledger.FigureStore = (*Store)(nil)

// Transitions implements ledger.FigureStore.
func (s *Store) Transitions(ctx context.Context, tenant string, since time.Time) ([]ledger.Transition, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT e.operation_id, o.target, coalesce(e.from_state, ''), e.to_state, e.at
		FROM operation_events e JOIN operation_ledger o
			ON o.tenant_id = e.tenant_id AND o.operation_id = e.operation_id
		WHERE e.tenant_id = ? AND e.at >= ?
			AND e.to_state IN ('UNKNOWN', 'SUCCEEDED', 'FAILED_TERMINAL', 'ESCALATED')
		ORDER BY e.at, e.event_id`, tenant, micros(since))
	if err != nil {
		return nil, fmt.Errorf("transitions: %w", err)
	}
	defer rows.Close()
	var out []ledger.Transition
	for rows.Next() {
		var (
			t        ledger.Transition
			from, to string
			at       int64
		)
		if err := rows.Scan(&t.OperationID, &t.Target, &from, &to, &at); err != nil {
			return nil, fmt.Errorf("transitions: %w", err)
		}
		t.From, t.To, t.At = ledger.State(from), ledger.State(to), fromMicros(at)
		out = append(out, t)
	}
	return out, rows.Err()
}

var _ ledger.TenantLister = (*Store)(nil)

// Tenants implements ledger.TenantLister.
func (s *Store) Tenants(ctx context.Context) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT DISTINCT tenant_id FROM operation_ledger ORDER BY tenant_id`)
	if err != nil {
		return nil, fmt.Errorf("tenants: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, fmt.Errorf("tenants: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}
