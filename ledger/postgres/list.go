package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"settle/ledger"
)

// List implements ledger.Store. Each tenant's page is one backward walk of
// an index that leads with the tenant and ends in created_at: the
// (tenant_id, created_at, operation_id) index, or, filtered, the tenant's
// state (00009) or target (00015) index. A set of tenants walks each
// tenant's index for at most one page and merges the walks, so its cost is
// the number of tenants times the page, whatever their history. Every
// tenant walks (created_at, operation_id), the state's or the target's
// index (00015, 00006) from the newest.
func (s *Store) List(ctx context.Context, f ledger.ListFilter) (ledger.Page, error) {
	cur, err := f.Normalize()
	if err != nil {
		return ledger.Page{}, err
	}
	tenants, all := f.TenantSet()
	if !all && len(tenants) == 0 {
		return ledger.Page{}, nil
	}
	var q query
	conds := q.filter(f)
	if cur != nil {
		conds = append(conds, "(created_at, operation_id) < ("+q.arg(cur.CreatedAt)+", "+q.arg(cur.ID)+"::uuid)")
	}
	limit := q.arg(f.Limit + 1)
	var sql string
	switch {
	case all || len(tenants) == 1:
		if !all {
			conds = append([]string{"tenant_id = " + q.arg(tenants[0])}, conds...)
		}
		// Qualified: a bare operation_id names the output column, its text.
		sql = `SELECT ` + summaryCols + ` FROM operation_ledger` + where(conds) + `
		ORDER BY operation_ledger.created_at DESC, operation_ledger.operation_id DESC LIMIT ` + limit
	default:
		sql = `SELECT ` + summaryCols + ` FROM unnest(` + q.arg(tenants) + `::text[]) AS t(tenant),
		LATERAL (SELECT * FROM operation_ledger` + where(append([]string{"tenant_id = t.tenant"}, conds...)) + `
			ORDER BY created_at DESC, operation_id DESC LIMIT ` + limit + `) AS operation_ledger
		ORDER BY operation_ledger.created_at DESC, operation_ledger.operation_id DESC LIMIT ` + limit
	}
	ops, err := collect(s.pool.Query(ctx, sql, q.args...))
	if err != nil {
		return ledger.Page{}, fmt.Errorf("list: %w", err)
	}
	return ledger.NextPage(ops, f.Limit), nil
}

// query collects the arguments of a statement built from a filter.
type query struct{ args []any }

// arg adds v and returns its placeholder.
func (q *query) arg(v any) string {
	q.args = append(q.args, v)
	return "$" + strconv.Itoa(len(q.args))
}

// filter returns the conditions of f beyond its tenants and cursor.
func (q *query) filter(f ledger.ListFilter) []string {
	var conds []string
	if f.IntentRef != "" {
		conds = append(conds, "intent_ref = "+q.arg(f.IntentRef))
	}
	if f.State != "" {
		conds = append(conds, stateIs(f.State))
	}
	if f.Target != "" {
		conds = append(conds, "target = "+q.arg(f.Target))
	}
	if f.CreatedAfter != nil {
		conds = append(conds, "created_at >= "+q.arg(*f.CreatedAfter))
	}
	if f.CreatedBefore != nil {
		conds = append(conds, "created_at < "+q.arg(*f.CreatedBefore))
	}
	return conds
}

// stateIs is the condition on a valid state, written as a literal so that
// the planner can prove the partial indexes' WHERE state <> 'SUCCEEDED'
// from the statement alone, custom plan or not. The literal comes from
// ledger.States, never from the caller's text.
func stateIs(s ledger.State) string {
	for _, v := range ledger.States {
		if v == s {
			return "state = '" + string(v) + "'"
		}
	}
	panic("postgres: stateIs: state " + strconv.Quote(string(s)) + " was not validated")
}

func where(conds []string) string {
	if len(conds) == 0 {
		return ""
	}
	return "\n\t\tWHERE " + strings.Join(conds, " AND ")
}
