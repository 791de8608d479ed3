package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"settle/ledger"
)

// claimSet is the SET list of every sender claim, with ?2 the claim's time
// and leaseEnd an expression of the lease's end. The first claim starts the
// same-key replay window; nothing returns to PREPARED, so every claim is the
// first, but the window is never moved by a later one.
func claimSet(leaseEnd string) string {
	return `state = 'IN_FLIGHT', fence_token = fence_token + 1,
	attempt_count = attempt_count + 1, lease_expires_at = ` + leaseEnd + `, updated_at = ?2, reason = '',
	last_sent_at = ?2, first_claimed_at = coalesce(first_claimed_at, ?2),
	retry_window_end = CASE WHEN first_claimed_at IS NULL THEN ?2 + retry_window_micros
		ELSE retry_window_end END`
}

// batchLeaseEnd is a batch claim's lease end: ?2 plus the lease of the row's
// target in the JSON object ?3 (target → microseconds), or ?1.
const batchLeaseEnd = `?2 + coalesce((SELECT value FROM json_each(?3) WHERE key = operation_ledger.target), ?1)`

func claimedEvents(ops []ledger.Operation) []event {
	evs := make([]event, len(ops))
	for i, op := range ops {
		evs[i] = event{op: op, from: ledger.Prepared, actor: ledger.ActorExecutor, reason: "claimed"}
	}
	return evs
}

// Claim implements ledger.Store.
func (s *Store) Claim(ctx context.Context, tenant, id string, hash []byte, lease time.Duration) (ledger.Operation, error) {
	if lease <= 0 {
		return ledger.Operation{}, ledger.Errorf(ledger.EInvalid, "lease must be positive")
	}
	now := s.clock()
	var ops []ledger.Operation
	err := s.inObservedTx(ctx, func(tx *sql.Tx, c *ledger.Commit) error {
		var err error
		ops, err = collect(tx.QueryContext(ctx, `UPDATE operation_ledger SET `+claimSet("?1")+`
			WHERE tenant_id = ? AND operation_id = ? AND state = 'PREPARED' AND payload_hash = ?
			RETURNING `+cols, micros(now.Add(lease)), micros(now), tenant, id, hash))
		if err != nil {
			return err
		}
		return appendEvents(ctx, tx, c, claimedEvents(ops))
	})
	if err != nil {
		return ledger.Operation{}, fmt.Errorf("claim: %w", err)
	}
	if len(ops) == 0 {
		op, err := s.Get(ctx, tenant, id)
		if err != nil {
			return ledger.Operation{}, err
		}
		return ledger.Operation{}, ledger.NotClaimable(op, hash)
	}
	return ledger.VerifyClaimed(ctx, ops[0], s.Record)
}

// ClaimBatch implements ledger.Store. Each row's lease is looked up by its
// target in a JSON object of per-target leases.
func (s *Store) ClaimBatch(ctx context.Context, n int, lease time.Duration, byTarget ...ledger.TargetLease) ([]ledger.Operation, error) {
	if err := ledger.CheckClaimBatch(n, lease, byTarget); err != nil {
		return nil, err
	}
	leases := make(map[string]int64, len(byTarget))
	for _, l := range byTarget {
		leases[l.Target] = l.Lease.Microseconds()
	}
	byTargetJSON, err := json.Marshal(leases)
	if err != nil {
		return nil, fmt.Errorf("claim batch: %w", err)
	}
	now := s.clock()
	var ops []ledger.Operation
	err = s.inObservedTx(ctx, func(tx *sql.Tx, c *ledger.Commit) error {
		var err error
		ops, err = collect(tx.QueryContext(ctx, `UPDATE operation_ledger SET `+claimSet(batchLeaseEnd)+`
			WHERE (tenant_id, operation_id) IN (
				SELECT tenant_id, operation_id FROM operation_ledger
				WHERE state = 'PREPARED' ORDER BY created_at LIMIT ?4)
			RETURNING `+cols, lease.Microseconds(), micros(now), string(byTargetJSON), n))
		if err != nil {
			return err
		}
		return appendEvents(ctx, tx, c, claimedEvents(ops))
	})
	if err != nil {
		return nil, fmt.Errorf("claim batch: %w", err)
	}
	sortByCreated(ops)
	out := ops[:0]
	for _, op := range ops {
		if op, err := ledger.VerifyClaimed(ctx, op, s.Record); err == nil {
			out = append(out, op)
		}
	}
	return out, nil
}

// Record implements ledger.Store.
func (s *Store) Record(ctx context.Context, o ledger.Outcome) (ledger.Operation, error) {
	ops, errs, err := s.record(ctx, []ledger.Outcome{o})
	if err != nil {
		return ledger.Operation{}, err
	}
	if errs[0] != nil {
		return ledger.Operation{}, errs[0]
	}
	return ops[0], nil
}

// RecordBatch implements ledger.Store.
func (s *Store) RecordBatch(ctx context.Context, outcomes []ledger.Outcome) ([]error, error) {
	_, errs, err := s.record(ctx, outcomes)
	return errs, err
}

// record applies each valid outcome with a conditional UPDATE carrying the
// fence and the expected state, all in one transaction. When the
// transaction fails, it falls back to one per outcome (ledger.RecordEach).
func (s *Store) record(ctx context.Context, outcomes []ledger.Outcome) ([]ledger.Operation, []error, error) {
	now := s.clock()
	errs, evidence := ledger.ValidateOutcomes(outcomes)
	ops := make([]ledger.Operation, len(outcomes))
	applied := make([]bool, len(outcomes))
	err := s.inObservedTx(ctx, func(tx *sql.Tx, c *ledger.Commit) error {
		var evs []event
		for i, o := range outcomes {
			if errs[i] != nil {
				continue
			}
			got, err := collect(tx.QueryContext(ctx, `UPDATE operation_ledger SET state = ?1,
				remote_ref = coalesce(nullif(?2, ''), remote_ref), lease_expires_at = NULL,
				next_reconcile_at = ?3, reason = ?4, updated_at = ?5, last_sent_at = coalesce(?6, last_sent_at),
				retry_window_end = CASE WHEN ?11 THEN min(retry_window_end, ?5) ELSE retry_window_end END
				WHERE tenant_id = ?7 AND operation_id = ?8 AND state = ?9 AND fence_token = ?10
				RETURNING `+cols, string(o.To), o.RemoteRef, microsPtr(ledger.NextReconcile(o, now)),
				o.Reason, micros(now), microsPtr(o.SentAt), o.Tenant, o.OperationID, string(o.From), o.Fence,
				o.EndReplay))
			if err != nil {
				return err
			}
			if len(got) == 1 {
				ops[i], applied[i] = got[0], true
				evs = append(evs, event{op: got[0], from: o.From, actor: o.Actor, reason: o.Reason, evidence: evidence[i]})
			}
		}
		if err := appendEvents(ctx, tx, c, evs); err != nil {
			return err
		}
		// Client callbacks: notifications of the states tenants are told
		// about are queued in this same transaction, so they cannot be lost
		// (callbacks.go).
		return enqueueCallbacks(ctx, tx, evs)
	})
	if err != nil {
		err = fmt.Errorf("record: %w", err)
		if valid := countNil(errs); valid <= 1 || ctx.Err() != nil {
			return nil, nil, err
		}
		// One refused row rolls back the whole transaction: record the
		// rows one by one so that it costs only its own verdict.
		ops, allFailed := ledger.RecordEach(ctx, outcomes, errs, s.Record)
		if allFailed {
			return nil, nil, err
		}
		return ops, errs, nil
	}
	ledger.ExplainUnapplied(ctx, outcomes, errs, applied, s.Get)
	return ops, errs, nil
}

// SweepExpired implements ledger.Store.
func (s *Store) SweepExpired(ctx context.Context) (int, error) {
	now := s.clock()
	var n int
	err := s.inObservedTx(ctx, func(tx *sql.Tx, c *ledger.Commit) error {
		ops, err := collect(tx.QueryContext(ctx, `UPDATE operation_ledger SET state = 'UNKNOWN',
			lease_expires_at = NULL, next_reconcile_at = ?1, reason = ?2, updated_at = ?1
			WHERE state = 'IN_FLIGHT' AND lease_expires_at <= ?1
			RETURNING `+cols, micros(now), ledger.ReasonLeaseExpired))
		if err != nil {
			return err
		}
		n = len(ops)
		evs := make([]event, len(ops))
		for i, op := range ops {
			evs[i] = event{op: op, from: ledger.InFlight, actor: ledger.ActorSweeper, reason: ledger.ReasonLeaseExpired}
		}
		return appendEvents(ctx, tx, c, evs)
	})
	if err != nil {
		return 0, fmt.Errorf("sweep: %w", err)
	}
	return n, nil
}

// LeaseUnknown implements ledger.Store. As on PostgreSQL, the lease moves
// next_reconcile_at to its end and picking is fair across tenants, and its
// cost does not grow with the backlog: it walks the tenants with UNKNOWN
// work through operation_ledger_unknown_tenant (00042), bounds each one's
// candidates at its n-th due time (SQLite has no LATERAL), and ranks only
// those. The single writer takes no row locks to skip. The skipped targets
// (a JSON list) are left out of the bound as well as of the candidates, so
// that their backlog does not use up a tenant's n.
func (s *Store) LeaseUnknown(ctx context.Context, n int, lease time.Duration, skipTargets ...string) ([]ledger.Operation, error) {
	if lease <= 0 || n <= 0 {
		return nil, ledger.Errorf(ledger.EInvalid, "batch size and lease must be positive")
	}
	if skipTargets == nil {
		skipTargets = []string{}
	}
	skip, err := json.Marshal(skipTargets)
	if err != nil {
		return nil, fmt.Errorf("lease unknown: %w", err)
	}
	now := s.clock()
	var ops []ledger.Operation
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		ops, err = collect(tx.QueryContext(ctx, `UPDATE operation_ledger SET
			fence_token = fence_token + 1, lease_expires_at = ?1, next_reconcile_at = ?1, updated_at = ?2
			WHERE (tenant_id, operation_id) IN (
				WITH RECURSIVE tenants(id) AS (
					SELECT (SELECT tenant_id FROM operation_ledger WHERE state = 'UNKNOWN' ORDER BY tenant_id LIMIT 1)
					UNION ALL
					SELECT (SELECT tenant_id FROM operation_ledger WHERE state = 'UNKNOWN' AND tenant_id > t.id
						ORDER BY tenant_id LIMIT 1)
					FROM tenants t WHERE t.id IS NOT NULL
				), bound AS (
					SELECT t.id, coalesce((SELECT next_reconcile_at FROM operation_ledger
						WHERE tenant_id = t.id AND state = 'UNKNOWN' AND next_reconcile_at <= ?2
							AND target NOT IN (SELECT value FROM json_each(?4))
						ORDER BY next_reconcile_at LIMIT 1 OFFSET ?3 - 1), ?2) AS upto
					FROM tenants t WHERE t.id IS NOT NULL
				), due AS (
					SELECT o.tenant_id, o.operation_id, o.next_reconcile_at,
						row_number() OVER (PARTITION BY o.tenant_id ORDER BY o.next_reconcile_at, o.operation_id) AS rank
					FROM bound b CROSS JOIN operation_ledger o INDEXED BY operation_ledger_unknown_tenant
					WHERE o.tenant_id = b.id AND o.state = 'UNKNOWN' AND o.next_reconcile_at <= b.upto
						AND o.target NOT IN (SELECT value FROM json_each(?4))
				)
				SELECT tenant_id, operation_id FROM due ORDER BY rank, next_reconcile_at LIMIT ?3)
			RETURNING `+cols, micros(now.Add(lease)), micros(now), n, string(skip)))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("lease unknown: %w", err)
	}
	return ops, nil
}

// countNil counts the outcomes of a batch still valid.
func countNil(errs []error) int {
	n := 0
	for _, e := range errs {
		if e == nil {
			n++
		}
	}
	return n
}
