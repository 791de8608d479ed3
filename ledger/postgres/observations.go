package postgres

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"

	"settle/ledger"
)

var _ ledger.ObservationStore = (*Store)(nil)

// RecordObservations implements ledger.ObservationStore: one statement,
// the transitions and the refusals unnested from arrays.
func (s *Store) RecordObservations(ctx context.Context, c ledger.Commit) error {
	if c.Len() == 0 {
		return nil
	}
	n := c.Len()
	tenants, ids, targets := make([]string, 0, n), make([]string, 0, n), make([]string, 0, n)
	froms, tos, ats := make([]string, 0, n), make([]string, 0, n), make([]time.Time, 0, n)
	for _, t := range c.Transitions {
		tenants, ids, targets = append(tenants, t.Tenant), append(ids, t.OperationID), append(targets, t.Target)
		froms, tos, ats = append(froms, string(t.From)), append(tos, string(t.To)), append(ats, t.At)
	}
	now := s.clock()
	for _, tenant := range c.Refused {
		tenants, ids, targets = append(tenants, tenant), append(ids, ""), append(targets, "")
		froms, tos, ats = append(froms, ""), append(tos, ""), append(ats, now)
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO observations (tenant_id, operation_id, target, from_state, to_state, at, refused)
		SELECT t, o, g, f, d, a, d = '' FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[])
			WITH ORDINALITY AS u(t, o, g, f, d, a, i) ORDER BY i`,
		tenants, ids, targets, froms, tos, ats)
	if err != nil {
		return fmt.Errorf("record observations: %w", err)
	}
	return nil
}

// DrainObservations implements ledger.ObservationStore. SKIP LOCKED lets
// replicas drain at once, each taking rows the others have not locked.
func (s *Store) DrainObservations(ctx context.Context, limit int) (ledger.Commit, error) {
	if limit <= 0 {
		return ledger.Commit{}, ledger.Errorf(ledger.EInvalid, "limit must be positive, got %d", limit)
	}
	rows, err := s.pool.Query(ctx, `DELETE FROM observations WHERE observation_id IN (
			SELECT observation_id FROM observations ORDER BY observation_id LIMIT $1 FOR UPDATE SKIP LOCKED)
		RETURNING observation_id, tenant_id, operation_id, target, from_state, to_state, at, refused`, limit)
	if err != nil {
		return ledger.Commit{}, fmt.Errorf("drain observations: %w", err)
	}
	obs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (observation, error) {
		var o observation
		err := r.Scan(&o.id, &o.t.Tenant, &o.t.OperationID, &o.t.Target, &o.t.From, &o.t.To, &o.t.At, &o.refused)
		o.t.At = o.t.At.UTC()
		return o, err
	})
	if err != nil {
		return ledger.Commit{}, fmt.Errorf("drain observations: %w", err)
	}
	return commitOf(obs), nil
}

// observation is one drained row.
type observation struct {
	id      int64
	t       ledger.Transition
	refused bool
}

// commitOf orders drained rows as they were recorded (RETURNING has no
// order) and makes them one Commit.
func commitOf(obs []observation) ledger.Commit {
	sort.Slice(obs, func(i, j int) bool { return obs[i].id < obs[j].id })
	var c ledger.Commit
	for _, o := range obs {
		if o.refused {
			c.Refuse(o.t.Tenant)
		} else {
			c.Transitions = append(c.Transitions, o.t)
		}
	}
	return c
}
