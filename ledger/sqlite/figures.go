package sqlite

import (
	"context"
	"fmt"
	"time"

	"settle/ledger"
)

var _ ledger.FigureStore = (*Store)(nil)

// Transitions implements ledger.FigureStore.
func (s *Store) Transitions(ctx context.Context, tenant string, w ledger.Window) ([]ledger.Transition, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT e.operation_id, o.target, coalesce(e.from_state, ''), e.to_state, e.at
		FROM operation_events e JOIN operation_ledger o
			ON o.tenant_id = e.tenant_id AND o.operation_id = e.operation_id
		WHERE e.tenant_id = ? AND e.at >= ? AND e.at < ?
			AND e.to_state IN ('UNKNOWN', 'SUCCEEDED', 'FAILED_TERMINAL', 'ESCALATED')
		ORDER BY e.at, e.event_id`, tenant, micros(w.Since), micros(w.Until))
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

var _ ledger.RollupStore = (*Store)(nil)

// FigureRollup implements ledger.RollupStore from the rollup tables of
// migrations 00018 and 00030.
func (s *Store) FigureRollup(ctx context.Context, tenant string, w ledger.Window) (ledger.Rollup, error) {
	if !w.WholeDays() {
		return ledger.Rollup{}, ledger.Errorf(ledger.EInvalid, "rollups answer whole UTC days")
	}
	var r ledger.Rollup
	if err := s.rollupRows(ctx, `SELECT DISTINCT target FROM figure_days WHERE tenant_id = ? AND day >= ? AND day < ?`,
		[]any{tenant, w.Since.UTC().Format(time.DateOnly), w.Until.UTC().Format(time.DateOnly)}, func(scan func(...any) error) error {
			var t string
			err := scan(&t)
			r.Targets = append(r.Targets, t)
			return err
		}); err != nil {
		return r, err
	}
	if err := s.rollupRows(ctx, `SELECT target, entered_at, escalated_at, final_at, coalesce(final_state, '') FROM figure_episodes
		WHERE tenant_id = ? AND entered_at >= ? AND entered_at < ?`, []any{tenant, micros(w.Since), micros(w.Until)}, func(scan func(...any) error) error {
		var (
			e                ledger.Episode
			entered          int64
			escalated, final *int64
			state            string
		)
		if err := scan(&e.Target, &entered, &escalated, &final, &state); err != nil {
			return err
		}
		e.Started, e.Escalated, e.Final, e.FinalState = fromMicros(entered), timePtr(escalated), timePtr(final), ledger.State(state)
		r.Episodes = append(r.Episodes, e)
		return nil
	}); err != nil {
		return r, err
	}
	err := s.rollupRows(ctx, `SELECT target, at FROM figure_escalations WHERE tenant_id = ? AND at >= ? AND at < ?`,
		[]any{tenant, micros(w.Since), micros(w.Until)}, func(scan func(...any) error) error {
			var (
				e  ledger.Escalation
				at int64
			)
			err := scan(&e.Target, &at)
			e.At = fromMicros(at)
			r.Escalations = append(r.Escalations, e)
			return err
		})
	return r, err
}

func (s *Store) rollupRows(ctx context.Context, query string, args []any, each func(scan func(...any) error) error) error {
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("figure rollup: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := each(rows.Scan); err != nil {
			return fmt.Errorf("figure rollup: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("figure rollup: %w", err)
	}
	return nil
}

func timePtr(us *int64) *time.Time {
	if us == nil {
		return nil
	}
	t := fromMicros(*us)
	return &t
}
