package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"sort"

	"settle/ledger"
)

var _ ledger.ObservationStore = (*Store)(nil)

// RecordObservations implements ledger.ObservationStore, in one
// transaction on the writer.
func (s *Store) RecordObservations(ctx context.Context, c ledger.Commit) error {
	if c.Len() == 0 {
		return nil
	}
	now := micros(s.clock())
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		const insert = `INSERT INTO observations (tenant_id, operation_id, target, from_state, to_state, at, refused)
			VALUES (?, ?, ?, ?, ?, ?, ?)`
		for _, t := range c.Transitions {
			if _, err := tx.ExecContext(ctx, insert, t.Tenant, t.OperationID, t.Target, string(t.From), string(t.To), micros(t.At), 0); err != nil {
				return err
			}
		}
		for _, tenant := range c.Refused {
			if _, err := tx.ExecContext(ctx, insert, tenant, "", "", "", "", now, 1); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record observations: %w", err)
	}
	return nil
}

// DrainObservations implements ledger.ObservationStore. The single writer
// serialises drainers: each row is deleted, and returned, once.
func (s *Store) DrainObservations(ctx context.Context, limit int) (ledger.Commit, error) {
	if limit <= 0 {
		return ledger.Commit{}, ledger.Errorf(ledger.EInvalid, "limit must be positive, got %d", limit)
	}
	type observation struct {
		id      int64
		t       ledger.Transition
		refused bool
	}
	var obs []observation
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		obs = nil
		rows, err := tx.QueryContext(ctx, `DELETE FROM observations WHERE observation_id IN (
				SELECT observation_id FROM observations ORDER BY observation_id LIMIT ?)
			RETURNING observation_id, tenant_id, operation_id, target, from_state, to_state, at, refused`, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				o  observation
				at int64
			)
			if err := rows.Scan(&o.id, &o.t.Tenant, &o.t.OperationID, &o.t.Target, &o.t.From, &o.t.To, &at, &o.refused); err != nil {
				return err
			}
			o.t.At = fromMicros(at)
			obs = append(obs, o)
		}
		return rows.Err()
	})
	if err != nil {
		return ledger.Commit{}, fmt.Errorf("drain observations: %w", err)
	}
	// RETURNING has no order: as they were recorded.
	sort.Slice(obs, func(i, j int) bool { return obs[i].id < obs[j].id })
	var c ledger.Commit
	for _, o := range obs {
		if o.refused {
			c.Refuse(o.t.Tenant)
		} else {
			c.Transitions = append(c.Transitions, o.t)
		}
	}
	return c, nil
}
