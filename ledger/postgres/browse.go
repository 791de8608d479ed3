package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"settle/ledger"
)

var _ ledger.Browser = (*Store)(nil)

// CountByState implements ledger.Browser. Each state is counted by its own
// subquery that stops at ledger.CountCap+1 rows, so a count costs at most
// that many rows however many match. One tenant, or all, walks newest
// first the tenant's state index (00009) or every tenant's (00015), or
// for SUCCEEDED, which those leave out, a created_at index, where nearly
// every row is one. The order is what makes the planner walk an index:
// unordered, it reads the table from its start for a state nearly every
// row is in, which is quick until a filter (an age, say) leaves few such
// rows there. A set of tenants is unordered (an order across tenants
// would sort all their rows): the planner reads their rows through a
// tenant's index until the cap.
func (s *Store) CountByState(ctx context.Context, f ledger.ListFilter) (ledger.StateCounts, error) {
	if err := f.NormalizeCount(); err != nil {
		return ledger.StateCounts{}, err
	}
	tenants, all := f.TenantSet()
	if !all && len(tenants) == 0 {
		return ledger.NewStateCounts(nil), nil
	}
	var q query
	conds := q.filter(f)
	order := " ORDER BY created_at DESC"
	switch {
	case len(tenants) == 1:
		conds = append([]string{"tenant_id = " + q.arg(tenants[0])}, conds...)
	case !all:
		conds = append([]string{"tenant_id = ANY(" + q.arg(tenants) + "::text[])"}, conds...)
		order = ""
	}
	limit := q.arg(ledger.CountCap + 1)
	var parts []string
	for _, st := range ledger.States {
		parts = append(parts, `SELECT '`+string(st)+`', count(*) FROM (SELECT FROM operation_ledger`+
			where(append([]string{stateIs(st)}, conds...))+order+` LIMIT `+limit+`) AS capped`)
	}
	rows, err := s.pool.Query(ctx, strings.Join(parts, "\n\t\tUNION ALL "), q.args...)
	if err != nil {
		return ledger.StateCounts{}, fmt.Errorf("count by state: %w", err)
	}
	defer rows.Close()
	counted := map[ledger.State]int{}
	for rows.Next() {
		var (
			st string
			n  int
		)
		if err := rows.Scan(&st, &n); err != nil {
			return ledger.StateCounts{}, fmt.Errorf("count by state: %w", err)
		}
		counted[ledger.State(st)] = n
	}
	if err := rows.Err(); err != nil {
		return ledger.StateCounts{}, fmt.Errorf("count by state: %w", err)
	}
	return ledger.NewStateCounts(counted), nil
}

// Search implements ledger.Browser. Each kind of reference is one index
// look-up per tenant (as Find's). Every tenant means the tenants that have
// operations, found first by a skip over an index that leads with the
// tenant (one probe each), since only the remote key is indexed without
// the tenant.
func (s *Store) Search(ctx context.Context, f ledger.SearchFilter) ([]ledger.Operation, error) {
	if err := f.Normalize(); err != nil {
		return nil, err
	}
	tenants, all := f.TenantSet()
	if !all && len(tenants) == 0 {
		return nil, nil
	}
	var (
		q      query
		with   string
		tenant string
	)
	switch {
	case all:
		// Recursive: the next tenant after the last, one index probe each.
		with = `WITH RECURSIVE tenants (tenant) AS (
			SELECT min(tenant_id) FROM operation_ledger
			UNION ALL SELECT (SELECT min(tenant_id) FROM operation_ledger WHERE tenant_id > tenant)
			FROM tenants WHERE tenant IS NOT NULL)
		`
		tenant = "tenant_id IN (SELECT tenant FROM tenants WHERE tenant IS NOT NULL)"
	case len(tenants) == 1:
		tenant = "tenant_id = " + q.arg(tenants[0])
	default:
		tenant = "tenant_id = ANY(" + q.arg(tenants) + "::text[])"
	}
	ref := q.arg(f.Ref)
	// Each of the two searches adds its own arguments to these.
	loose := query{args: slices.Clone(q.args)}
	exact := []string{tenant + " AND intent_ref = " + ref, tenant + " AND remote_ref = " + ref,
		// Any object id settle has seen for the operation (migration 00033):
		// the second charge of a duplicate is the one a customer quotes.
		tenant + " AND (tenant_id, operation_id) IN (SELECT tenant_id, operation_id FROM operation_objects WHERE " +
			tenant + " AND object_id = " + ref + ")"}
	if id, ok := ledger.ParseID(f.Ref); ok {
		id := q.arg(id)
		exact = append(exact, tenant+" AND operation_id = "+id+"::uuid")
		key := "remote_key = " + id + "::uuid"
		if !all {
			key += " AND " + tenant
		}
		exact = append(exact, key)
	}
	ops, err := s.search(ctx, with, exact, &q)
	if err != nil || len(ops) > 0 {
		return ops, err
	}
	// Nothing carries the text exactly: what a person may have meant
	// (migration 00031's folded intent index, the primary key's range).
	near := []string{tenant + " AND lower(intent_ref) = lower(" + ref + ")"}
	if first, last, ok := ledger.IDPrefixRange(f.Ref); ok {
		near = append(near, tenant+" AND operation_id BETWEEN "+loose.arg(first)+"::uuid AND "+loose.arg(last)+"::uuid")
	}
	return s.search(ctx, with, near, &loose)
}

// search runs the union of the branches (conditions on operation_ledger),
// newest first, at most MaxSearchResults.
func (s *Store) search(ctx context.Context, with string, branches []string, q *query) ([]ledger.Operation, error) {
	for i, b := range branches {
		branches[i] = `SELECT ` + summaryCols + ` FROM operation_ledger WHERE ` + b
	}
	// UNION, not UNION ALL: an operation found by two of its references is
	// one result. 18 and 2 are created_at and the operation's id.
	sql := with + strings.Join(branches, "\n\t\tUNION ") + `
		ORDER BY 18 DESC, 2 DESC LIMIT ` + q.arg(ledger.MaxSearchResults)
	ops, err := collect(s.pool.Query(ctx, sql, q.args...))
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	return ops, nil
}
