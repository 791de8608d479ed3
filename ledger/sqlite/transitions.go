package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"settle/ledger"
)

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
