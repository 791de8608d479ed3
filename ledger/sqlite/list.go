package sqlite

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"settle/ledger"
)

// List implements ledger.Store. The statement holds only the conditions
// the filter sets (SQLite's planner cannot use an index for a condition
// that an empty parameter switches off), so each tenant's page is a
// backward walk of the tenant's created, state or target index; a set of
// tenants is one such walk per tenant, at most a page each, merged. Every
// tenant walks the created, state or target index without the tenant
// (00015, 00006).
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
		conds = append(conds, "(created_at, operation_id) < ("+q.arg(micros(cur.CreatedAt))+", "+q.arg(cur.ID)+")")
	}
	limit := q.arg(f.Limit + 1)
	const order = "\n\t\tORDER BY created_at DESC, operation_id DESC LIMIT "
	var sql string
	if all {
		sql = `SELECT ` + summaryCols + ` FROM operation_ledger` + where(conds) + order + limit
	} else {
		// One walk per tenant: a compound of subqueries, each with its own
		// ORDER BY and LIMIT, merged by the outer ORDER BY.
		var walks []string
		for _, t := range tenants {
			walks = append(walks, `SELECT * FROM (SELECT `+summaryCols+` FROM operation_ledger`+
				where(append([]string{"tenant_id = " + q.arg(t)}, conds...))+order+limit+`)`)
		}
		sql = walks[0]
		if len(walks) > 1 {
			sql = `SELECT * FROM (` + strings.Join(walks, "\n\t\tUNION ALL ") + `)` + order + limit
		}
	}
	ops, err := collect(s.r.QueryContext(ctx, sql, q.args...))
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
	return "?" + strconv.Itoa(len(q.args))
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
		conds = append(conds, "created_at >= "+q.arg(micros(*f.CreatedAfter)))
	}
	if f.CreatedBefore != nil {
		conds = append(conds, "created_at < "+q.arg(micros(*f.CreatedBefore)))
	}
	return conds
}

// stateIs is the condition on a valid state. SQLite uses a partial index
// (WHERE state <> 'SUCCEEDED') only when the statement holds that very
// term, which it cannot derive from state = 'X', let alone from a bound
// parameter: so the term is added, redundant but for the planner. The
// literal comes from ledger.States, never from the caller's text.
func stateIs(s ledger.State) string {
	for _, v := range ledger.States {
		switch {
		case v != s:
		case v == ledger.Succeeded:
			return "state = 'SUCCEEDED'"
		default:
			return "state = '" + string(v) + "' AND state <> 'SUCCEEDED'"
		}
	}
	panic("sqlite: stateIs: state " + strconv.Quote(string(s)) + " was not validated")
}

func where(conds []string) string {
	if len(conds) == 0 {
		return ""
	}
	return "\n\t\tWHERE " + strings.Join(conds, " AND ")
}
