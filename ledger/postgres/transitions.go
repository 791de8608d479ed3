package postgres

import (
	"context"
	"fmt"
	"time"

	"settle/ledger"
)

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
