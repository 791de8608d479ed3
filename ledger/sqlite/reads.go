package sqlite

import (
	"context"
	"database/sql"
	"strconv"
	"time"

	"settle/ledger"
	"settle/ledger/internal/sqlfilter"
	"settle/ledger/sqlite/internal/dbsqlc"
)

var (
	_ ledger.QueueLister = (*Store)(nil)
	_ ledger.Browser     = (*Store)(nil)
)

// dialect is how SQLite spells sqlfilter's conditions.
var dialect = sqlfilter.Dialect{
	Placeholder: func(n int) string { return "?" + strconv.Itoa(n) },
	Value: func(v any) any {
		if t, ok := v.(time.Time); ok {
			return micros(t)
		}
		return v
	},
	// SQLite uses a partial index (WHERE state <> 'SUCCEEDED') only when
	// the statement holds that very term, which it cannot derive from
	// state = 'X', let alone from a bound parameter: so the term is added,
	// redundant but for the planner.
	State: func(s ledger.State) string {
		if s == ledger.Succeeded {
			return "state = 'SUCCEEDED'"
		}
		return "state = '" + string(s) + "' AND state <> 'SUCCEEDED'"
	},
	// LIKE ignores the case of ASCII letters in SQLite.
	ILike: "LIKE",
	// Driven from the open proposals (resolutions_open_all), which are
	// few, rather than tested for every row of a long queue.
	Awaiting: func(subject string) string {
		return `(tenant_id, operation_id) IN (SELECT tenant_id, operation_id FROM resolutions
			WHERE decided_at IS NULL AND proposed_by <> ` + subject + `)`
	},
	// Without statistics (settle runs no ANALYZE) SQLite takes the primary
	// key's tenant_id over (tenant_id, intent_ref) and reads the tenant's
	// every row: so a search names the reference indexes.
	Hint: func(index string) string { return "INDEXED BY " + index },
}

// spliced is a connection that expands the template blocks of the
// statements sqlc generated (reads.sql) before sending them.
type spliced struct {
	dbsqlc.DBTX
	blocks sqlfilter.Blocks
}

// QueryContext implements dbsqlc.DBTX.
func (s spliced) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	query, args, err := sqlfilter.Expand(&dialect, query, args, s.blocks)
	if err != nil {
		return nil, err
	}
	return s.DBTX.QueryContext(ctx, query, args...)
}

// QueryRowContext implements dbsqlc.DBTX for no statement: a *sql.Row
// cannot carry Expand's error, so the spliced statements are all :many.
func (s spliced) QueryRowContext(context.Context, string, ...any) *sql.Row {
	panic("sqlite: a spliced statement must be :many")
}

// splice returns the reading queries with blocks spliced into their
// templates.
func (d driver) splice(blocks sqlfilter.Blocks) *dbsqlc.Queries {
	return dbsqlc.New(spliced{DBTX: d.rx, blocks: blocks})
}

// summaryRow is any row of reads.sql's listings: an operation without its
// payload, in operation_ledger's columns.
type summaryRow interface {
	dbsqlc.OperationListRow | dbsqlc.OperationWalkRow | dbsqlc.OperationWalksRow | dbsqlc.OperationSearchRow |
		dbsqlc.OperationSearchAllTenantsRow
}

func summaries[R summaryRow](rows []R, err error) ([]ledger.Operation, error) {
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	out := make([]ledger.Operation, len(rows))
	for i, r := range rows {
		out[i] = operationOf(dbsqlc.OperationLedger(r))
	}
	return out, nil
}

// walks reads the union of one walk per element of wheres, in dir, at
// most limit rows: one walk is OperationWalk, more are merged by
// OperationWalks' outer ORDER BY.
func (d driver) walks(ctx context.Context, wheres [][]sqlfilter.Cond, dir sqlfilter.Block, limit int) ([]ledger.Operation, error) {
	copies := make([]sqlfilter.Blocks, len(wheres))
	for i, w := range wheres {
		copies[i] = sqlfilter.Blocks{"where": sqlfilter.Where(w...)}
	}
	if len(copies) == 1 {
		copies[0]["dir"] = dir
		return summaries(d.splice(copies[0]).OperationWalk(ctx, int64(limit)))
	}
	q := d.splice(sqlfilter.Blocks{"walk": sqlfilter.Repeat("UNION ALL", copies...), "dir": dir})
	return summaries(q.OperationWalks(ctx, int64(limit)))
}

// OperationList implements ledger.ReadDriver. Each tenant's page is a
// backward walk of the tenant's created, state or target index; a set of
// tenants is one such walk per tenant, at most a page each, merged. Every
// tenant walks the created, state or target index without the tenant
// (00015, 00006).
func (d driver) OperationList(ctx context.Context, p ledger.ListParams) ([]ledger.Operation, error) {
	conds := sqlfilter.List(p.Filter, p.Cursor)
	if p.All {
		return summaries(d.splice(sqlfilter.Blocks{"where": sqlfilter.Where(conds...)}).OperationList(ctx,
			int64(p.Filter.Limit+1)))
	}
	var wheres [][]sqlfilter.Cond
	for _, t := range p.Tenants {
		wheres = append(wheres, append([]sqlfilter.Cond{sqlfilter.Tenants([]string{t})}, conds...))
	}
	return d.walks(ctx, wheres, sqlfilter.Text("DESC"), p.Filter.Limit+1)
}

// QueueList implements ledger.ReadDriver. Each state, and each tenant of
// a set, is its own walk in creation order of the state's index (every
// tenant: (state, created_at, operation_id), 00015; a tenant: (tenant_id,
// state, created_at)), at most a page each, merged by the outer ORDER BY.
func (d driver) QueueList(ctx context.Context, p ledger.QueueParams) ([]ledger.Operation, error) {
	scopes := [][]sqlfilter.Cond{nil}
	if !p.All {
		scopes = nil
		for _, t := range p.Tenants {
			scopes = append(scopes, []sqlfilter.Cond{sqlfilter.Tenants([]string{t})})
		}
	}
	var wheres [][]sqlfilter.Cond
	for _, w := range sqlfilter.Queue(p.Filter, p.Cursor) {
		for _, scope := range scopes {
			wheres = append(wheres, append(scope[:len(scope):len(scope)], w...))
		}
	}
	return d.walks(ctx, wheres, sqlfilter.Dir(p.Filter), p.Filter.Limit+1)
}

// StateCount implements ledger.ReadDriver. Each state is counted by its
// own subquery that stops at ledger.CountCap+1 rows, read from a state
// index (00015) or, for SUCCEEDED, which those leave out, a created_at
// index.
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
