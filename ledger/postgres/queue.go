package postgres

import (
	"context"
	"fmt"
	"strings"

	"settle/ledger"
)

var _ ledger.QueueLister = (*Store)(nil)

// ListQueue implements ledger.QueueLister. Each state is its own walk in
// creation order, merged: every tenant walks the state's partial index
// (state, created_at, operation_id) (00015); one tenant, or each of a
// set, walks (tenant_id, state, created_at) (00009), at most a page each.
// A page costs its size times the states (and tenants), whatever the
// queue's length, unless a filter the index does not hold (reason, a
// proposal awaiting someone) rejects most rows.
func (s *Store) ListQueue(ctx context.Context, f ledger.QueueFilter) (ledger.Page, error) {
	cur, err := f.Normalize()
	if err != nil {
		return ledger.Page{}, err
	}
	tenants, all := f.TenantSet()
	if !all && len(tenants) == 0 {
		return ledger.Page{}, nil
	}
	var q query
	var conds []string
	if f.Target != "" {
		conds = append(conds, "target = "+q.arg(f.Target))
	}
	if f.CreatedBefore != nil {
		conds = append(conds, "created_at < "+q.arg(*f.CreatedBefore))
	}
	if f.Ref != "" {
		conds = append(conds, refCond(&q, f.Ref))
	}
	if f.Reason != "" {
		conds = append(conds, `reason ILIKE `+q.arg(ledger.LikePattern(f.Reason))+` ESCAPE '\'`)
	}
	if f.AwaitingOthersOf != "" {
		conds = append(conds, `EXISTS (SELECT 1 FROM resolutions r WHERE r.tenant_id = operation_ledger.tenant_id
			AND r.operation_id = operation_ledger.operation_id AND r.decided_at IS NULL AND r.proposed_by <> `+
			q.arg(f.AwaitingOthersOf)+`)`)
	}
	dir, cmp := "ASC", ">"
	if f.Newest {
		dir, cmp = "DESC", "<"
	}
	if cur != nil {
		conds = append(conds, "(created_at, operation_id) "+cmp+" ("+q.arg(cur.CreatedAt)+", "+q.arg(cur.ID)+"::uuid)")
	}
	var now string // only when read: PostgreSQL cannot type an unused parameter
	if f.Overdue {
		now = q.arg(f.Now)
	}
	limit := q.arg(f.Limit + 1)
	order := " ORDER BY created_at " + dir + ", operation_id " + dir + " LIMIT " + limit
	var tenantArg string
	if !all && len(tenants) > 1 {
		tenantArg = q.arg(tenants)
	}
	var walks []string
	for _, st := range f.States() {
		c := append([]string{stateIs(st)}, conds...)
		if st == ledger.Unknown {
			c = append(c, "deadline <= "+now)
		}
		switch {
		case all:
			walks = append(walks, `(SELECT `+summaryCols+` FROM operation_ledger`+where(c)+order+`)`)
		case len(tenants) == 1:
			c = append([]string{"tenant_id = " + q.arg(tenants[0])}, c...)
			walks = append(walks, `(SELECT `+summaryCols+` FROM operation_ledger`+where(c)+order+`)`)
		default:
			walks = append(walks, `(SELECT `+summaryCols+` FROM unnest(`+tenantArg+`::text[]) AS t(tenant),
			LATERAL (SELECT * FROM operation_ledger`+where(append([]string{"tenant_id = t.tenant"}, c...))+order+`) AS operation_ledger)`)
		}
	}
	// 18 and 2 are created_at and the operation's id (as text, which
	// orders as the uuid does).
	sql := "SELECT * FROM (" + strings.Join(walks, "\n\t\tUNION ALL ") + ") AS queue\n\t\tORDER BY 18 " + dir + ", 2 " + dir + " LIMIT " + limit
	ops, err := collect(s.pool.Query(ctx, sql, q.args...))
	if err != nil {
		return ledger.Page{}, fmt.Errorf("list queue: %w", err)
	}
	return ledger.NextPage(ops, f.Limit), nil
}

// refCond is the condition that an operation carries ref: its id or an
// id prefix, its intent reference (exactly or but for case) or its remote
// reference; each is an index of the tenant's (or the primary key).
func refCond(q *query, ref string) string {
	r := q.arg(ref)
	alts := []string{"intent_ref = " + r, "lower(intent_ref) = lower(" + r + ")", "remote_ref = " + r}
	if id, ok := ledger.ParseID(ref); ok {
		alts = append(alts, "operation_id = "+q.arg(id)+"::uuid")
	} else if first, last, ok := ledger.IDPrefixRange(ref); ok {
		alts = append(alts, "operation_id BETWEEN "+q.arg(first)+"::uuid AND "+q.arg(last)+"::uuid")
	}
	return "(" + strings.Join(alts, " OR ") + ")"
}
