package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"settle/ledger"
)

var _ ledger.FigureStore = (*Store)(nil)

// Transitions implements ledger.FigureStore.
func (s *Store) Transitions(ctx context.Context, tenant string, w ledger.Window) ([]ledger.Transition, error) {
	rows, err := s.pool.Query(ctx, `SELECT e.operation_id::text, o.target, coalesce(e.from_state, ''), e.to_state, e.at
		FROM operation_events e JOIN operation_ledger o
			ON o.tenant_id = e.tenant_id AND o.operation_id = e.operation_id
		WHERE e.tenant_id = $1 AND e.at >= $2 AND e.at < $3
			AND e.to_state IN ('UNKNOWN', 'SUCCEEDED', 'FAILED_TERMINAL', 'ESCALATED')
		ORDER BY e.at, e.event_id`, tenant, w.Since, w.Until)
	if err != nil {
		return nil, fmt.Errorf("transitions: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.Transition, error) {
		var (
			t        ledger.Transition
			from, to string
		)
		err := r.Scan(&t.OperationID, &t.Target, &from, &to, &t.At)
		t.From, t.To, t.At = ledger.State(from), ledger.State(to), t.At.UTC()
		return t, err
	})
	if err != nil {
		return nil, fmt.Errorf("transitions: %w", err)
	}
	return out, nil
}

var _ ledger.TenantLister = (*Store)(nil)

// Tenants implements ledger.TenantLister. A loose index scan: one probe of
// operation_ledger_tenant_created per tenant, not a walk of every row.
func (s *Store) Tenants(ctx context.Context) ([]string, error) {
	rows, err := s.pool.Query(ctx, `WITH RECURSIVE t(id) AS (
		SELECT min(tenant_id) FROM operation_ledger
		UNION ALL
		SELECT (SELECT min(tenant_id) FROM operation_ledger WHERE tenant_id > t.id) FROM t WHERE t.id IS NOT NULL
	) SELECT id FROM t WHERE id IS NOT NULL`)
	if err != nil {
		return nil, fmt.Errorf("tenants: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("tenants: %w", err)
	}
	return out, nil
}

var _ ledger.RollupStore = (*Store)(nil)

// FigureRollup implements ledger.RollupStore: three index range reads of
// the rollup tables (migrations 00018 and 00030), whatever the size of the event log.
func (s *Store) FigureRollup(ctx context.Context, tenant string, w ledger.Window) (ledger.Rollup, error) {
	if !w.WholeDays() {
		return ledger.Rollup{}, ledger.Errorf(ledger.EInvalid, "rollups answer whole UTC days")
	}
	var r ledger.Rollup
	rows, err := s.pool.Query(ctx, `SELECT DISTINCT target FROM figure_days
		WHERE tenant_id = $1 AND day >= $2::date AND day < $3::date`,
		tenant, w.Since.UTC().Format(time.DateOnly), w.Until.UTC().Format(time.DateOnly))
	if err == nil {
		r.Targets, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if err != nil {
		return r, fmt.Errorf("figure rollup: %w", err)
	}
	rows, err = s.pool.Query(ctx, `SELECT target, entered_at, escalated_at, final_at, coalesce(final_state, '')
		FROM figure_episodes WHERE tenant_id = $1 AND entered_at >= $2 AND entered_at < $3`, tenant, w.Since, w.Until)
	if err == nil {
		r.Episodes, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (ledger.Episode, error) {
			var (
				e     ledger.Episode
				final string
			)
			err := row.Scan(&e.Target, &e.Started, &e.Escalated, &e.Final, &final)
			e.FinalState = ledger.State(final)
			return e, err
		})
	}
	if err != nil {
		return r, fmt.Errorf("figure rollup: %w", err)
	}
	rows, err = s.pool.Query(ctx, `SELECT target, at FROM figure_escalations
		WHERE tenant_id = $1 AND at >= $2 AND at < $3`, tenant, w.Since, w.Until)
	if err == nil {
		r.Escalations, err = pgx.CollectRows(rows, pgx.RowToStructByPos[ledger.Escalation])
	}
	if err != nil {
		return r, fmt.Errorf("figure rollup: %w", err)
	}
	return r, nil
}
