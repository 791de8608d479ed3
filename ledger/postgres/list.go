package postgres

import (
	"context"
	"fmt"

	"settle/ledger"
)

// List implements ledger.Store. The (tenant_id, created_at, operation_id)
// index serves every page, walked backwards from the cursor.
func (s *Store) List(ctx context.Context, f ledger.ListFilter) (ledger.Page, error) {
	cur, err := f.Normalize()
	if err != nil {
		return ledger.Page{}, err
	}
	var after, afterID any
	if cur != nil {
		after, afterID = cur.CreatedAt, cur.ID
	}
	ops, err := collect(s.pool.Query(ctx, `SELECT `+summaryCols+` FROM operation_ledger
		WHERE tenant_id = $1
			AND ($2 = '' OR intent_ref = $2)
			AND ($3 = '' OR state = $3)
			AND ($4::timestamptz IS NULL OR (created_at, operation_id) < ($4, $5::uuid))
		ORDER BY created_at DESC, operation_id DESC
		LIMIT $6`, f.Tenant, f.IntentRef, string(f.State), after, afterID, f.Limit+1))
	if err != nil {
		return ledger.Page{}, fmt.Errorf("list: %w", err)
	}
	return ledger.NextPage(ops, f.Limit), nil
}
