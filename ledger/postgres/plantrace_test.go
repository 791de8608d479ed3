package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// statementLog is a pgx QueryTracer that records every statement a pool
// runs, with its arguments, so that TestPlans explains what the store
// really sends rather than a copy of it.
type statementLog struct {
	mu    sync.Mutex
	stmts []statement
}

type statement struct {
	sql  string
	args []any
	took time.Duration
}

type traceKey struct{}

type traceStart struct {
	statement
	at time.Time
}

// TraceQueryStart implements pgx.QueryTracer.
func (l *statementLog) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	return context.WithValue(ctx, traceKey{}, traceStart{statement{sql: d.SQL, args: d.Args}, time.Now()})
}

// TraceQueryEnd implements pgx.QueryTracer.
func (l *statementLog) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	s, ok := ctx.Value(traceKey{}).(traceStart)
	if !ok || isTxControl(s.sql) {
		return
	}
	s.took = time.Since(s.at)
	l.mu.Lock()
	l.stmts = append(l.stmts, s.statement)
	l.mu.Unlock()
}

// TraceBatchStart implements pgx.BatchTracer.
func (l *statementLog) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

// TraceBatchQuery implements pgx.BatchTracer: each statement of a batch
// is explained like any other (its time is the batch's, not its own).
func (l *statementLog) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	l.mu.Lock()
	l.stmts = append(l.stmts, statement{sql: d.SQL, args: d.Args})
	l.mu.Unlock()
}

// TraceBatchEnd implements pgx.BatchTracer.
func (l *statementLog) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// take returns the statements recorded since the last call.
func (l *statementLog) take() []statement {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.stmts
	l.stmts = nil
	return out
}

// isTxControl tells pgx's own BEGIN, COMMIT and ROLLBACK apart: they have
// no plan.
func isTxControl(sql string) bool {
	f := strings.Fields(strings.ToLower(sql))
	return len(f) > 0 && slices.Contains([]string{"begin", "commit", "rollback"}, f[0])
}

// planNode is one node of EXPLAIN (FORMAT JSON).
type planNode struct {
	NodeType string     `json:"Node Type"`
	Relation string     `json:"Relation Name"`
	Index    string     `json:"Index Name"`
	Rows     float64    `json:"Plan Rows"`
	Plans    []planNode `json:"Plans"`
}

// explain plans sql with args as the server would for that execution
// (custom plans: see postgres.ParseConfig). EXPLAIN without ANALYZE runs
// nothing, so data-modifying statements are safe to explain.
func explain(ctx context.Context, pool *pgxpool.Pool, s statement) (planNode, string, error) {
	var js []byte
	if err := pool.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+s.sql, s.args...).Scan(&js); err != nil {
		return planNode{}, "", err
	}
	var doc []struct {
		Plan planNode `json:"Plan"`
	}
	if err := json.Unmarshal(js, &doc); err != nil || len(doc) != 1 {
		return planNode{}, "", fmt.Errorf("EXPLAIN output: %v", err)
	}
	text, err := explainText(ctx, pool, "EXPLAIN ", s)
	return doc[0].Plan, text, err
}

// explainGeneric plans the statement as a prepared statement's generic
// plan, the one the server may keep after five executions under
// plan_cache_mode=auto: parameters unknown, only the statistics. It
// prepares the statement on one connection and explains its EXECUTE.
func explainGeneric(ctx context.Context, pool *pgxpool.Pool, s statement) (planNode, string, error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return planNode{}, "", err
	}
	defer conn.Release()
	c := conn.Conn()
	if _, err := c.Exec(ctx, "SET plan_cache_mode = force_generic_plan"); err != nil {
		return planNode{}, "", err
	}
	defer func() { _, _ = c.Exec(context.WithoutCancel(ctx), "RESET plan_cache_mode") }()
	sd, err := c.Prepare(ctx, "settle_generic_plan", s.sql)
	if err != nil {
		return planNode{}, "", err
	}
	defer func() { _ = c.Deallocate(context.WithoutCancel(ctx), "settle_generic_plan") }()
	// A generic plan does not depend on the values: NULLs, which take each
	// parameter's type, stand in for them.
	params := make([]string, len(sd.ParamOIDs))
	for i := range params {
		params[i] = "NULL"
	}
	execute := "EXECUTE settle_generic_plan"
	if len(params) > 0 {
		execute += "(" + strings.Join(params, ", ") + ")"
	}
	var js []byte
	if err := c.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+execute).Scan(&js); err != nil {
		return planNode{}, "", err
	}
	var doc []struct {
		Plan planNode `json:"Plan"`
	}
	if err := json.Unmarshal(js, &doc); err != nil || len(doc) != 1 {
		return planNode{}, "", fmt.Errorf("EXPLAIN output: %v", err)
	}
	text, err := explainText(ctx, c, "EXPLAIN ", statement{sql: execute})
	return doc[0].Plan, text, err
}

// explainAnalyze runs the statement in a transaction that is rolled back,
// for the timings and sort figures of the large-table runs. The store has
// already run it once, so it sees the rows that call left behind.
func explainAnalyze(ctx context.Context, pool *pgxpool.Pool, s statement) (string, error) {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return "", err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	return explainText(ctx, tx, "EXPLAIN (ANALYZE, BUFFERS) ", s)
}

func explainText(ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, prefix string, s statement) (string, error) {
	rows, err := q.Query(ctx, prefix+s.sql, s.args...)
	if err != nil {
		return "", err
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return strings.Join(lines, "\n"), err
}

// scans lists the plan's table and index accesses and its sorts, in plan
// order, e.g. "Index Scan operation_ledger_claimable on operation_ledger".
func (n planNode) scans() []string {
	var out []string
	var walk func(planNode)
	walk = func(n planNode) {
		switch {
		case n.NodeType == "ModifyTable":
			// The target of an INSERT or UPDATE, not a read.
		case n.Index != "" && n.Relation != "":
			out = append(out, fmt.Sprintf("%s %s on %s", n.NodeType, n.Index, n.Relation))
		case n.Index != "":
			out = append(out, fmt.Sprintf("%s %s", n.NodeType, n.Index))
		case n.NodeType == "Bitmap Heap Scan":
			// Its Bitmap Index Scan child names the index.
		case n.Relation != "":
			out = append(out, fmt.Sprintf("%s on %s", n.NodeType, n.Relation))
		case n.NodeType == "Sort" || n.NodeType == "Incremental Sort":
			out = append(out, fmt.Sprintf("%s (≈%.0f rows)", n.NodeType, n.Rows))
		}
		for _, c := range n.Plans {
			walk(c)
		}
	}
	walk(n)
	return out
}

// seqScans returns the tables the plan reads whole.
func (n planNode) seqScans() []string {
	var out []string
	if n.NodeType == "Seq Scan" {
		out = append(out, n.Relation)
	}
	for _, c := range n.Plans {
		out = append(out, c.seqScans()...)
	}
	return out
}

// indexes returns the indexes the plan uses.
func (n planNode) indexes() []string {
	var out []string
	if n.Index != "" {
		out = append(out, n.Index)
	}
	for _, c := range n.Plans {
		out = append(out, c.indexes()...)
	}
	return out
}
