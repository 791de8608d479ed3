package postgres

import (
	"context"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"settle/ledger"
	"settle/ledger/internal/sqlfilter"
	"settle/ledger/postgres/internal/dbsqlc"
)

var (
	_ ledger.QueueLister = (*Store)(nil)
	_ ledger.Browser     = (*Store)(nil)
)

// dialect is how PostgreSQL spells sqlfilter's conditions.
var dialect = sqlfilter.Dialect{
	Placeholder: func(n int) string { return "$" + strconv.Itoa(n) },
	UUIDCast:    "::uuid",
	// A literal, so that the planner can prove the partial indexes' WHERE
	// state <> 'SUCCEEDED' from the statement alone, custom plan or not.
	State:       func(s ledger.State) string { return "state = '" + string(s) + "'" },
	TenantArray: true,
	ILike:       "ILIKE",
	Awaiting: func(subject string) string {
		return `EXISTS (SELECT 1 FROM resolutions r WHERE r.tenant_id = operation_ledger.tenant_id
			AND r.operation_id = operation_ledger.operation_id AND r.decided_at IS NULL AND r.proposed_by <> ` +
			subject + `)`
	},
}

// spliced is a connection that expands the template blocks of the
// statements sqlc generated (reads.sql) before sending them.
type spliced struct {
	dbsqlc.DBTX
	blocks sqlfilter.Blocks
}

// Query implements dbsqlc.DBTX.
func (s spliced) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	sql, args, err := sqlfilter.Expand(&dialect, sql, args, s.blocks)
	if err != nil {
		return nil, err
	}
	return s.DBTX.Query(ctx, sql, args...)
}

// QueryRow implements dbsqlc.DBTX.
func (s spliced) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	sql, args, err := sqlfilter.Expand(&dialect, sql, args, s.blocks)
	if err != nil {
		return errRow{err}
	}
	return s.DBTX.QueryRow(ctx, sql, args...)
}

// Exec implements dbsqlc.DBTX.
func (s spliced) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	sql, args, err := sqlfilter.Expand(&dialect, sql, args, s.blocks)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	return s.DBTX.Exec(ctx, sql, args...)
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// splice returns the queries with blocks spliced into their templates.
func (d driver) splice(blocks sqlfilter.Blocks) *dbsqlc.Queries {
	return dbsqlc.New(spliced{DBTX: d.db, blocks: blocks})
}

// summaryRow is any row of reads.sql's listings: an operation without its
// payload, in OperationGet's columns.
type summaryRow interface {
	dbsqlc.OperationListRow | dbsqlc.OperationListTenantsRow | dbsqlc.QueueListRow | dbsqlc.QueueListTenantsRow |
		dbsqlc.OperationSearchRow | dbsqlc.OperationSearchAllTenantsRow
}

func summaries[R summaryRow](rows []R, err error) ([]ledger.Operation, error) {
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	out := make([]ledger.Operation, len(rows))
	for i, r := range rows {
		out[i] = operationOf(dbsqlc.OperationGetRow(r))
	}
	return out, nil
}

// lateral is the condition inside a LATERAL walk of one of unnest's
// tenants.
var lateral = sqlfilter.Raw("tenant_id = t.tenant")

// OperationList implements ledger.ReadDriver. Each tenant's page is one
// backward walk of an index that leads with the tenant and ends in
// created_at: the (tenant_id, created_at, operation_id) index, or,
// filtered, the tenant's state (00009) or target (00015) index. A set of
// tenants walks each tenant's index for at most one page (LATERAL) and
// merges the walks, so its cost is the number of tenants times the page,
// whatever their history. Every tenant walks (created_at, operation_id),
// the state's or the target's index (00015, 00006) from the newest.
func (d driver) OperationList(ctx context.Context, p ledger.ListParams) ([]ledger.Operation, error) {
	conds := sqlfilter.List(p.Filter, p.Cursor)
	limit := int32(p.Filter.Limit + 1)
	if p.All || len(p.Tenants) == 1 {
		if !p.All {
			conds = append([]sqlfilter.Cond{sqlfilter.Tenants(p.Tenants)}, conds...)
		}
		return summaries(d.splice(sqlfilter.Blocks{"where": sqlfilter.Where(conds...)}).OperationList(ctx, limit))
	}
	q := d.splice(sqlfilter.Blocks{"where": sqlfilter.Where(append([]sqlfilter.Cond{lateral}, conds...)...)})
	return summaries(q.OperationListTenants(ctx, dbsqlc.OperationListTenantsParams{Tenants: p.Tenants, Max: limit}))
}

// QueueList implements ledger.ReadDriver. Each state is its own walk in
// creation order, merged: every tenant walks the state's partial index
// (state, created_at, operation_id) (00015); one tenant, or each of a
// set, walks (tenant_id, state, created_at) (00009), at most a page each.
// A page costs its size times the states (and tenants), whatever the
// queue's length, unless a filter the index does not hold (reason, a
// proposal awaiting someone) rejects most rows.
func (d driver) QueueList(ctx context.Context, p ledger.QueueParams) ([]ledger.Operation, error) {
	var scope []sqlfilter.Cond
	switch {
	case p.All:
	case len(p.Tenants) == 1:
		scope = []sqlfilter.Cond{sqlfilter.Tenants(p.Tenants)}
	default:
		scope = []sqlfilter.Cond{lateral}
	}
	walks := sqlfilter.Queue(p.Filter, p.Cursor)
	copies := make([]sqlfilter.Blocks, len(walks))
	for i, w := range walks {
		copies[i] = sqlfilter.Blocks{"where": sqlfilter.Where(append(scope[:len(scope):len(scope)], w...)...)}
	}
	q := d.splice(sqlfilter.Blocks{"walk": sqlfilter.Repeat("UNION ALL", copies...), "dir": sqlfilter.Dir(p.Filter)})
	limit := int32(p.Filter.Limit + 1)
	if p.All || len(p.Tenants) == 1 {
		return summaries(q.QueueList(ctx, limit))
	}
	return summaries(q.QueueListTenants(ctx, dbsqlc.QueueListTenantsParams{Tenants: p.Tenants, Max: limit}))
}

// StateCount implements ledger.ReadDriver. Each state is counted by its
// own subquery that stops at ledger.CountCap+1 rows, so a count costs at
// most that many rows however many match. One tenant, or all, walks
// newest first the tenant's state index (00009) or every tenant's
// (00015), or for SUCCEEDED, which those leave out, a created_at index,
// where nearly every row is one. The order is what makes the planner walk
// an index: unordered, it reads the table from its start for a state
// nearly every row is in, which is quick until a filter (an age, say)
// leaves few such rows there. A set of tenants is unordered: the planner
// reads their rows through a tenant's index until the cap.
func (d driver) StateCount(ctx context.Context, p ledger.ListParams) (map[ledger.State]int, error) {
	rows, err := d.splice(sqlfilter.Count(p.Filter, p.Tenants, p.All)).StateCount(ctx, ledger.CountCap+1)
	if err != nil {
		return nil, err
	}
	counted := make(map[ledger.State]int, len(rows))
	for _, r := range rows {
		counted[ledger.State(r.State)] = int(r.N)
	}
	return counted, nil
}

// OperationSearch implements ledger.ReadDriver. Each kind of reference is
// one index look-up per tenant (as Find's). Every tenant means the
// tenants that have operations (the statement's recursive CTE).
func (d driver) OperationSearch(ctx context.Context, p ledger.SearchParams) ([]ledger.Operation, error) {
	q := d.splice(sqlfilter.Search(p.Ref, p.Tenants, p.All, p.Near))
	if p.All {
		return summaries(q.OperationSearchAllTenants(ctx, ledger.MaxSearchResults))
	}
	return summaries(q.OperationSearch(ctx, ledger.MaxSearchResults))
}
