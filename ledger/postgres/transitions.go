package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"settle/ledger"
)

// eventCTE appends one event per row of the CTE named src, which must
// return the operation columns plus from_state, actor, reason_ev, evidence.
const eventCTE = `ev AS (
	INSERT INTO operation_events (tenant_id, operation_id, from_state, to_state, fence_token,
		actor, reason, evidence, at)
	SELECT tenant_id, operation_id::uuid, from_state, state, fence_token, actor, reason_ev, evidence, updated_at
	FROM %s
)`

// claimSet is the SET list of every sender claim, for columns qualified by
// alias ("" or "o."), a lease end and the claim's time. The first claim
// starts the same-key replay window; nothing returns to PREPARED, so every
// claim is the first, but the window is never moved by a later one.
func claimSet(alias, leaseEnd, now string) string {
	return strings.NewReplacer("{a}", alias, "{lease}", leaseEnd, "{now}", now).Replace(`state = 'IN_FLIGHT',
		fence_token = {a}fence_token + 1, attempt_count = {a}attempt_count + 1,
		lease_expires_at = {lease}, updated_at = {now}, reason = '', last_sent_at = {now},
		first_claimed_at = coalesce({a}first_claimed_at, {now}),
		retry_window_end = CASE WHEN {a}first_claimed_at IS NULL
			THEN {now}::timestamptz + {a}retry_window_micros * interval '1 microsecond'
			ELSE {a}retry_window_end END`)
}

// Claim implements ledger.Store: one conditional UPDATE is the compare-and-
// swap, and it re-checks the approved hash.
func (s *Store) Claim(ctx context.Context, tenant, id string, hash []byte, lease time.Duration) (ledger.Operation, error) {
	if lease <= 0 {
		return ledger.Operation{}, ledger.Errorf(ledger.EInvalid, "lease must be positive")
	}
	if uuid.Validate(id) != nil {
		return ledger.Operation{}, ledger.Errorf(ledger.ENotFound, "operation not found")
	}
	now := s.clock()
	ops, err := collect(s.pool.Query(ctx, `
WITH c AS (
	UPDATE operation_ledger SET `+claimSet("", "$4", "$5")+`
	WHERE tenant_id = $1 AND operation_id = $2 AND state = 'PREPARED' AND payload_hash = $3
	RETURNING `+cols+`, 'PREPARED'::text AS from_state, 'executor'::text AS actor,
		'claimed'::text AS reason_ev, '{}'::jsonb AS evidence
), `+fmt.Sprintf(eventCTE, "c")+`
SELECT `+cols+` FROM c`, tenant, id, hash, now.Add(lease), now))
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
	s.tellClaimed(ctx, ops)
	return ledger.VerifyClaimed(ctx, ops[0], s.Record)
}

// ClaimBatch implements ledger.Store. Each row's lease is looked up by its
// target in the arrays of per-target leases ($4, $5), so that one statement
// claims the operations of many targets.
func (s *Store) ClaimBatch(ctx context.Context, n int, lease time.Duration, byTarget ...ledger.TargetLease) ([]ledger.Operation, error) {
	if err := ledger.CheckClaimBatch(n, lease, byTarget); err != nil {
		return nil, err
	}
	targets, leases := make([]string, len(byTarget)), make([]int64, len(byTarget))
	for i, l := range byTarget {
		targets[i], leases[i] = l.Target, l.Lease.Microseconds()
	}
	now := s.clock()
	ops, err := collect(s.pool.Query(ctx, `
WITH picked AS (
	SELECT tenant_id, operation_id FROM operation_ledger
	WHERE state = 'PREPARED' ORDER BY created_at LIMIT $1
	FOR UPDATE SKIP LOCKED
), c AS (
	UPDATE operation_ledger o SET `+claimSet("o.", `$3::timestamptz + interval '1 microsecond' *
		coalesce(($5::bigint[])[array_position($4::text[], o.target)], $2::bigint)`, "$3")+`
	FROM picked p
	WHERE o.tenant_id = p.tenant_id AND o.operation_id = p.operation_id AND o.state = 'PREPARED'
	RETURNING `+oCols+`, 'PREPARED'::text AS from_state, 'executor'::text AS actor,
		'claimed'::text AS reason_ev, '{}'::jsonb AS evidence
), `+fmt.Sprintf(eventCTE, "c")+`
SELECT `+cols+` FROM c ORDER BY created_at`, n, lease.Microseconds(), now, targets, leases))
	if err != nil {
		return nil, fmt.Errorf("claim batch: %w", err)
	}
	s.tellClaimed(ctx, ops)
	out := ops[:0]
	for _, op := range ops {
		op, err := ledger.VerifyClaimed(ctx, op, s.Record)
		if err != nil {
			continue // escalated by verifyClaimed; never sent
		}
		out = append(out, op)
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

// record applies the valid outcomes with one UPDATE … FROM unnest(…) whose
// join carries the fence and the expected state, and explains each outcome
// that did not apply. When the statement fails, it falls back to one
// statement per outcome (ledger.RecordEach).
func (s *Store) record(ctx context.Context, outcomes []ledger.Outcome) ([]ledger.Operation, []error, error) {
	now := s.clock()
	errs, evidence := ledger.ValidateOutcomes(outcomes)
	var (
		tenants, ids, froms, tos, refs, reasons, actors, evs []string
		fences                                               []int64
		nexts, sents                                         []*time.Time
		ends                                                 []bool
		index                                                = map[string]int{}
	)
	for i, o := range outcomes {
		if errs[i] != nil {
			continue
		}
		if uuid.Validate(o.OperationID) != nil {
			errs[i] = ledger.Errorf(ledger.ENotFound, "operation not found")
			continue
		}
		index[o.Tenant+"/"+o.OperationID] = i
		tenants, ids, fences = append(tenants, o.Tenant), append(ids, o.OperationID), append(fences, o.Fence)
		froms, tos, refs = append(froms, string(o.From)), append(tos, string(o.To)), append(refs, o.RemoteRef)
		nexts, sents, ends = append(nexts, ledger.NextReconcile(o, now)), append(sents, o.SentAt), append(ends, o.EndReplay)
		reasons, actors, evs = append(reasons, o.Reason), append(actors, o.Actor), append(evs, string(evidence[i]))
	}
	ops := make([]ledger.Operation, len(outcomes))
	applied := make([]bool, len(outcomes))
	if len(ids) > 0 {
		got, err := collect(s.pool.Query(ctx, `
WITH i AS (
	SELECT * FROM unnest($1::text[], $2::uuid[], $3::bigint[], $4::text[], $5::text[], $6::text[],
		$7::timestamptz[], $8::text[], $9::text[], $10::jsonb[], $12::timestamptz[], $14::bool[])
		AS t(tenant_id, operation_id, fence, from_state, to_state, remote_ref, next_at, reason, actor, evidence,
			sent_at, end_replay)
), u AS (
	UPDATE operation_ledger o SET state = i.to_state,
		remote_ref = coalesce(nullif(i.remote_ref, ''), o.remote_ref),
		lease_expires_at = NULL, next_reconcile_at = i.next_at, reason = i.reason, updated_at = $11,
		last_sent_at = coalesce(i.sent_at, o.last_sent_at),
		retry_window_end = CASE WHEN i.end_replay THEN least(o.retry_window_end, $11) ELSE o.retry_window_end END
	FROM i
	WHERE o.tenant_id = i.tenant_id AND o.operation_id = i.operation_id
		AND o.state = i.from_state AND o.fence_token = i.fence
	RETURNING `+oCols+`, i.from_state, i.actor, i.reason AS reason_ev, i.evidence
), `+fmt.Sprintf(eventCTE, "u")+`, `+
			// Client callbacks: the notification of a state the tenant is
			// told about is queued by this same statement, so it cannot be
			// lost (callbacks.go; $13).
			callbackCTE("$13")+`
SELECT `+cols+` FROM u`, tenants, ids, fences, froms, tos, refs, nexts, reasons, actors, evs, now, sents,
			callbackStates(), ends))
		if err != nil {
			err = fmt.Errorf("record: %w", err)
			if len(ids) == 1 || ctx.Err() != nil {
				return nil, nil, err
			}
			// One refused row fails the whole statement: record the rows
			// one by one so that it costs only its own verdict.
			ops, allFailed := ledger.RecordEach(ctx, outcomes, errs, s.Record)
			if allFailed {
				return nil, nil, err
			}
			return ops, errs, nil
		}
		var c ledger.Commit
		for _, op := range got {
			i := index[op.Tenant+"/"+op.ID]
			ops[i], applied[i] = op, true
		}
		for i, op := range ops {
			if applied[i] {
				c.Add(op, outcomes[i].From)
			}
		}
		c.Tell(ctx, s.observer)
	}
	ledger.ExplainUnapplied(ctx, outcomes, errs, applied, s.Get)
	return ops, errs, nil
}

// tellClaimed tells the observer of committed claims (PREPARED → IN_FLIGHT).
func (s *Store) tellClaimed(ctx context.Context, ops []ledger.Operation) {
	var c ledger.Commit
	for _, op := range ops {
		c.Add(op, ledger.Prepared)
	}
	c.Tell(ctx, s.observer)
}

// SweepExpired implements ledger.Store. It works in chunks so that a large
// backlog never holds many row locks at once; each chunk commits on its own
// and is told to the observer with its operations' tenants and targets.
func (s *Store) SweepExpired(ctx context.Context) (int, error) {
	total := 0
	for {
		now := s.clock()
		rows, err := s.pool.Query(ctx, `
WITH picked AS (
	SELECT tenant_id, operation_id FROM operation_ledger
	WHERE state = 'IN_FLIGHT' AND lease_expires_at <= $1
	LIMIT $2 FOR UPDATE SKIP LOCKED
), u AS (
	UPDATE operation_ledger o SET state = 'UNKNOWN', lease_expires_at = NULL,
		next_reconcile_at = $1, reason = $3, updated_at = $1
	FROM picked p
	WHERE o.tenant_id = p.tenant_id AND o.operation_id = p.operation_id
		AND o.state = 'IN_FLIGHT' AND o.lease_expires_at <= $1
	RETURNING `+oCols+`, 'IN_FLIGHT'::text AS from_state, 'sweeper'::text AS actor,
		$3::text AS reason_ev, '{}'::jsonb AS evidence
), `+fmt.Sprintf(eventCTE, "u")+`
SELECT tenant_id, operation_id::text, target, updated_at FROM u`, now, sweepChunk, ledger.ReasonLeaseExpired)
		var c ledger.Commit
		if err == nil {
			// Not the payloads: a chunk is up to sweepChunk operations.
			c.Transitions, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.Transition, error) {
				t := ledger.Transition{From: ledger.InFlight, To: ledger.Unknown}
				err := r.Scan(&t.Tenant, &t.OperationID, &t.Target, &t.At)
				t.At = t.At.UTC()
				return t, err
			})
		}
		if err != nil {
			return total, fmt.Errorf("sweep: %w", err)
		}
		c.Tell(ctx, s.observer)
		n := len(c.Transitions)
		total += n
		if n < sweepChunk {
			return total, nil
		}
	}
}

const sweepChunk = 1000

// LeaseUnknown implements ledger.Store. The lease moves next_reconcile_at to
// the lease's end, so a reconciler that dies simply makes the operation due
// again when its lease runs out.
//
// Picking is fair across tenants: due operations are ranked within their
// tenant and taken rank by rank, so a tenant with ten thousand due operations
// gets no more of a batch than one with ten until the smaller runs out.
//
// Its cost does not grow with the backlog: it walks the tenants that have
// UNKNOWN operations (one probe of operation_ledger_unknown_tenant each,
// migration 00042), reads at most n of each one's oldest due ids from that
// index, and locks only the n it takes, skipping rows another replica has
// locked (SKIP LOCKED) instead of queuing behind them. The skipped targets
// are filtered on the heap row inside the LATERAL, after the index probe.
func (s *Store) LeaseUnknown(ctx context.Context, n int, lease time.Duration, skipTargets ...string) ([]ledger.Operation, error) {
	if lease <= 0 || n <= 0 {
		return nil, ledger.Errorf(ledger.EInvalid, "batch size and lease must be positive")
	}
	if skipTargets == nil {
		skipTargets = []string{} // nil is NULL, and <> ALL(NULL) would skip everything
	}
	now := s.clock()
	ops, err := collect(s.pool.Query(ctx, `
WITH RECURSIVE tenants(id) AS (
	SELECT min(tenant_id) FROM operation_ledger WHERE state = 'UNKNOWN'
	UNION ALL
	SELECT (SELECT min(tenant_id) FROM operation_ledger WHERE state = 'UNKNOWN' AND tenant_id > t.id)
	FROM tenants t WHERE t.id IS NOT NULL
), due AS (
	SELECT d.tenant_id, d.operation_id, d.next_reconcile_at,
		row_number() OVER (PARTITION BY d.tenant_id ORDER BY d.next_reconcile_at, d.operation_id) AS rank
	FROM tenants t CROSS JOIN LATERAL (
		SELECT tenant_id, operation_id, next_reconcile_at FROM operation_ledger
		WHERE tenant_id = t.id AND state = 'UNKNOWN' AND next_reconcile_at <= $1 AND target <> ALL($4::text[])
		ORDER BY next_reconcile_at, operation_id LIMIT $2) d
	WHERE t.id IS NOT NULL
), picked AS (
	SELECT o.tenant_id, o.operation_id FROM operation_ledger o
	WHERE (o.tenant_id, o.operation_id) IN (SELECT tenant_id, operation_id FROM due ORDER BY rank, next_reconcile_at LIMIT $2)
	FOR UPDATE SKIP LOCKED
)
UPDATE operation_ledger o SET fence_token = o.fence_token + 1, lease_expires_at = $3,
	next_reconcile_at = $3, updated_at = $1
FROM picked p
WHERE o.tenant_id = p.tenant_id AND o.operation_id = p.operation_id
	AND o.state = 'UNKNOWN' AND o.next_reconcile_at <= $1
RETURNING `+oCols, now, n, now.Add(lease), skipTargets))
	if err != nil {
		return nil, fmt.Errorf("lease unknown: %w", err)
	}
	return ops, nil
}
