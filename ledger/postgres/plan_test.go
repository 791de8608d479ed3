package postgres_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestPlans checks that the hot and support statements use indexes once the
// table is large and mostly settled, the shape it has in production.
func TestPlans(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	pool := s.Pool()
	_, err := pool.Exec(ctx, `
INSERT INTO operation_ledger (tenant_id, operation_id, operation_type, intent_ref, target, payload,
	payload_hash, remote_key, state, remote_ref, retry_window_end, created_at, updated_at,
	lease_expires_at, next_reconcile_at)
SELECT 'tenant-' || (g % 50), gen_random_uuid(), 'charge', 'intent-' || g, 'payments', '{}',
	sha256(g::text::bytea), gen_random_uuid(),
	CASE WHEN g % 100 = 0 THEN 'PREPARED' WHEN g % 100 = 1 THEN 'IN_FLIGHT'
	     WHEN g % 100 = 2 THEN 'UNKNOWN' ELSE 'SUCCEEDED' END,
	'ref-' || g, now(), now() - (g || ' seconds')::interval, now(),
	CASE WHEN g % 100 = 1 THEN now() END, CASE WHEN g % 100 = 2 THEN now() END
FROM generate_series(1, 200000) g`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `ANALYZE operation_ledger`); err != nil {
		t.Fatal(err)
	}
	for name, stmt := range map[string]string{
		"ById":         `SELECT * FROM operation_ledger WHERE tenant_id = 'tenant-1' AND operation_id = '6f1c2f7e-0d7b-4a47-9b8e-2f0b1d1a9c11'`,
		"ByIntent":     `SELECT * FROM operation_ledger WHERE tenant_id = 'tenant-1' AND intent_ref = 'intent-51'`,
		"ByRemoteRef":  `SELECT * FROM operation_ledger WHERE tenant_id = 'tenant-1' AND remote_ref = 'ref-51'`,
		"ByRemoteKey":  `SELECT * FROM operation_ledger WHERE remote_key = '6f1c2f7e-0d7b-4a47-9b8e-2f0b1d1a9c11'`,
		"Claimable":    `SELECT tenant_id, operation_id FROM operation_ledger WHERE state = 'PREPARED' ORDER BY created_at LIMIT 100 FOR UPDATE SKIP LOCKED`,
		"Expired":      `SELECT tenant_id, operation_id FROM operation_ledger WHERE state = 'IN_FLIGHT' AND lease_expires_at <= now() LIMIT 1000`,
		"TenantNewest": `SELECT * FROM operation_ledger WHERE tenant_id = 'tenant-1' AND (created_at, operation_id) < (now(), '6f1c2f7e-0d7b-4a47-9b8e-2f0b1d1a9c11') ORDER BY created_at DESC, operation_id DESC LIMIT 51`,
		"DueUnknown":   `SELECT tenant_id, operation_id FROM operation_ledger WHERE state = 'UNKNOWN' AND next_reconcile_at <= now() ORDER BY next_reconcile_at LIMIT 100`,
		"AuditWalk":    `SELECT tenant_id, operation_id FROM operation_ledger WHERE target = 'payments' AND state IN ('SUCCEEDED', 'FAILED_TERMINAL') AND (created_at, operation_id) > (now() - interval '1 day', '6f1c2f7e-0d7b-4a47-9b8e-2f0b1d1a9c11') ORDER BY created_at, operation_id LIMIT 100`,
	} {
		t.Run(name, func(t *testing.T) {
			rows, err := pool.Query(ctx, "EXPLAIN "+stmt)
			if err != nil {
				t.Fatal(err)
			}
			lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				t.Fatal(err)
			}
			plan := strings.Join(lines, "\n")
			if strings.Contains(plan, "Seq Scan") || !strings.Contains(plan, "Index") {
				t.Fatalf("plan does not use an index:\n%s", plan)
			}
		})
	}
}
