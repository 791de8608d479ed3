package sqlite

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"settle/ledger"
)

var _ ledger.Browser = (*Store)(nil)

// CountByState implements ledger.Browser. Each state is counted by its own
// subquery that stops at ledger.CountCap+1 rows, read from a state index
// (00015) or, for SUCCEEDED, which those leave out, a created_at index.
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
	if !all {
		conds = append([]string{q.tenantIn(tenants)}, conds...)
	}
	// Newest first where an index gives that order for nothing (one tenant,
	// or all), as PostgreSQL's: the count walks an index rather than the
	// table from its start, where rows matching a filter may be few.
	order := ""
	if len(tenants) <= 1 {
		order = " ORDER BY created_at DESC"
	}
	limit := q.arg(ledger.CountCap + 1)
	var parts []string
	for _, st := range ledger.States {
		parts = append(parts, `SELECT '`+string(st)+`', count(*) FROM (SELECT 1 FROM operation_ledger`+
			where(append([]string{stateIs(st)}, conds...))+order+` LIMIT `+limit+`)`)
	}
	rows, err := s.r.QueryContext(ctx, strings.Join(parts, "\n\t\tUNION ALL "), q.args...)
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
	if all {
		with = `WITH RECURSIVE tenants (tenant) AS (
			SELECT (SELECT tenant_id FROM operation_ledger ORDER BY tenant_id LIMIT 1)
			UNION ALL SELECT (SELECT tenant_id FROM operation_ledger WHERE tenant_id > tenant ORDER BY tenant_id LIMIT 1)
			FROM tenants WHERE tenant IS NOT NULL)
		`
		tenant = "tenant_id IN (SELECT tenant FROM tenants WHERE tenant IS NOT NULL)"
	} else {
		tenant = q.tenantIn(tenants)
	}
	// Without statistics (settle runs no ANALYZE) SQLite takes the primary
	// key's tenant_id over (tenant_id, intent_ref) and reads the tenant's
	// every row: so the reference indexes are named.
	ref := q.arg(f.Ref)
	// Each of the two searches adds its own arguments to these.
	loose := query{args: slices.Clone(q.args)}
	exact := []string{
		"INDEXED BY operation_ledger_intent WHERE " + tenant + " AND intent_ref = " + ref,
		"INDEXED BY operation_ledger_remote_ref WHERE " + tenant + " AND remote_ref = " + ref,
		// Any object id settle has seen for the operation (migration 00033):
		// the second charge of a duplicate is the one a customer quotes.
		"WHERE " + tenant + " AND (tenant_id, operation_id) IN (SELECT tenant_id, operation_id FROM operation_objects WHERE " +
			tenant + " AND object_id = " + ref + ")",
	}
	if id, ok := ledger.ParseID(f.Ref); ok {
		id := q.arg(id)
		exact = append(exact, "WHERE "+tenant+" AND operation_id = "+id)
		key := "INDEXED BY operation_ledger_remote_key WHERE remote_key = " + id
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
	near := []string{"INDEXED BY operation_ledger_intent_folded WHERE " + tenant + " AND lower(intent_ref) = lower(" + ref + ")"}
	if first, last, ok := ledger.IDPrefixRange(f.Ref); ok {
		near = append(near, "WHERE "+tenant+" AND operation_id BETWEEN "+loose.arg(first)+" AND "+loose.arg(last))
	}
	return s.search(ctx, with, near, &loose)
}

// search runs the union of the branches (what follows FROM
// operation_ledger), newest first, at most MaxSearchResults.
func (s *Store) search(ctx context.Context, with string, branches []string, q *query) ([]ledger.Operation, error) {
	for i, b := range branches {
		branches[i] = `SELECT ` + summaryCols + ` FROM operation_ledger ` + b
	}
	// UNION, not UNION ALL: an operation found by two of its references is
	// one result.
	sql := with + strings.Join(branches, "\n\t\tUNION ") + `
		ORDER BY created_at DESC, operation_id DESC LIMIT ` + q.arg(ledger.MaxSearchResults)
	ops, err := collect(s.r.QueryContext(ctx, sql, q.args...))
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	return ops, nil
}

// tenantIn is the condition on a set of tenants.
func (q *query) tenantIn(tenants []string) string {
	if len(tenants) == 1 {
		return "tenant_id = " + q.arg(tenants[0])
	}
	ph := make([]string, len(tenants))
	for i, t := range tenants {
		ph[i] = q.arg(t)
	}
	return "tenant_id IN (" + strings.Join(ph, ", ") + ")"
}
