package sqlite

import (
	"context"
	"fmt"
	"strings"

	"settle/ledger"
)

var _ ledger.QueueLister = (*Store)(nil)

// ListQueue implements ledger.QueueLister. Each state, and each tenant of
// a set, is its own walk in creation order of the state's index (every
// tenant: (state, created_at, operation_id), 00015; a tenant: (tenant_id,
// state, created_at)), at most a page each, merged by the outer ORDER BY.
// The statement holds only the conditions the filter sets, so that the
// planner can use the indexes.
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
		conds = append(conds, "created_at < "+q.arg(micros(*f.CreatedBefore)))
	}
	if f.Ref != "" {
		r := q.arg(f.Ref)
		alts := []string{"intent_ref = " + r, "lower(intent_ref) = lower(" + r + ")", "remote_ref = " + r}
		if id, ok := ledger.ParseID(f.Ref); ok {
			alts = append(alts, "operation_id = "+q.arg(id))
		} else if first, last, ok := ledger.IDPrefixRange(f.Ref); ok {
			alts = append(alts, "operation_id BETWEEN "+q.arg(first)+" AND "+q.arg(last))
		}
		conds = append(conds, "("+strings.Join(alts, " OR ")+")")
	}
	if f.Reason != "" {
		// LIKE ignores the case of ASCII letters in SQLite.
		conds = append(conds, `reason LIKE `+q.arg(ledger.LikePattern(f.Reason))+` ESCAPE '\'`)
	}
	if f.AwaitingOthersOf != "" {
		// Driven from the open proposals (resolutions_open_all), which are
		// few, rather than tested for every row of a long queue.
		conds = append(conds, `(tenant_id, operation_id) IN (SELECT tenant_id, operation_id FROM resolutions
			WHERE decided_at IS NULL AND proposed_by <> `+q.arg(f.AwaitingOthersOf)+`)`)
	}
	dir, cmp := "ASC", ">"
	if f.Newest {
		dir, cmp = "DESC", "<"
	}
	if cur != nil {
		conds = append(conds, "(created_at, operation_id) "+cmp+" ("+q.arg(micros(cur.CreatedAt))+", "+q.arg(cur.ID)+")")
	}
	now := q.arg(micros(f.Now))
	limit := q.arg(f.Limit + 1)
	order := "\n\t\tORDER BY created_at " + dir + ", operation_id " + dir + " LIMIT " + limit
	scopes := [][]string{nil}
	if !all {
		scopes = nil
		for _, t := range tenants {
			scopes = append(scopes, []string{"tenant_id = " + q.arg(t)})
		}
	}
	var walks []string
	for _, st := range f.States() {
		c := append([]string{stateIs(st)}, conds...)
		if st == ledger.Unknown {
			c = append(c, "deadline <= "+now)
		}
		for _, scope := range scopes {
			walks = append(walks, `SELECT * FROM (SELECT `+summaryCols+` FROM operation_ledger`+
				where(append(scope, c...))+order+`)`)
		}
	}
	sql := walks[0]
	if len(walks) > 1 {
		sql = `SELECT * FROM (` + strings.Join(walks, "\n\t\tUNION ALL ") + `)` + order
	}
	ops, err := collect(s.r.QueryContext(ctx, sql, q.args...))
	if err != nil {
		return ledger.Page{}, fmt.Errorf("list queue: %w", err)
	}
	return ledger.NextPage(ops, f.Limit), nil
}
