package postgres_test

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/postgres"
	"settle/ledger/postgres/pgtest"
)

// planRows is the number of operations TestPlans loads: SETTLE_PLAN_ROWS,
// or a size that keeps the default run quick (scripts/plans-10m.sh uses
// 10 million).
func planRows(t *testing.T) int {
	v := os.Getenv("SETTLE_PLAN_ROWS")
	if v == "" {
		return 100_000
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 50_000 {
		t.Fatalf("SETTLE_PLAN_ROWS=%q: want a number of operations, at least 50000", v)
	}
	return n
}

// TestPlans runs every statement of the store against a large table of the
// shape production has, captures each statement with its arguments as the
// store sends it, and checks its plan: no big table read whole, and the
// indexes the method is meant to use. A method without a case fails the
// test. SETTLE_PLAN_ANALYZE=1 prints EXPLAIN ANALYZE (run in a rolled-back
// transaction) instead of EXPLAIN.
func TestPlans(t *testing.T) {
	t.Parallel()
	// The human actions (tokens, callbacks, resolutions) need an actor.
	ctx := ledger.NewContextWithActor(context.Background(), ledger.Actor{Subject: "cli:alice", Name: "alice", Role: "owner"})
	rows := planRows(t)
	clk := ledgertest.NewClock()
	cfg := pgtest.Schema(t)
	plain := pgtest.Pool(t, cfg)
	traced := cfg.Copy()
	trace := &statementLog{}
	traced.ConnConfig.Tracer = trace

	summary, err := load(ctx, plain, clk.Now(), rows)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d operations: %s", rows, summary)
	f := &planFixture{s: postgres.New(pgtest.Pool(t, traced), clk.Now), setup: postgres.New(plain, clk.Now), now: clk.Now()}
	pick(ctx, t, plain, f)
	pc := planCheck{pool: plain, analyze: os.Getenv("SETTLE_PLAN_ANALYZE") == "1"}
	if pc.big, pc.tableOf, err = sizes(ctx, plain); err != nil {
		t.Fatal(err)
	}

	covered := map[string]bool{}
	var table []string
	for _, c := range planCases {
		method, _, _ := strings.Cut(c.name, "/")
		covered[method] = true
		t.Run(c.name, func(t *testing.T) {
			trace.take()
			if err := c.run(ctx, f); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			stmts := trace.take()
			if len(stmts) == 0 {
				t.Fatalf("%s sent no statement: the case does not reach the database", c.name)
			}
			line := pc.checkPlans(ctx, t, c, stmts)
			table = append(table, fmt.Sprintf("| %s | %s |", c.name, line))
		})
	}
	for _, m := range storeMethods() {
		if !covered[m] && !slices.Contains(noStatements, m) {
			t.Errorf("Store.%s has no case in planCases: add one, so that its statements are plan-checked", m)
		}
	}
	t.Logf("plans at %d operations:\n| method | statements: plan (real time of the call) |\n|---|---|\n%s",
		rows, strings.Join(table, "\n"))
}

// planCheck is what checkPlans needs besides the case.
type planCheck struct {
	pool    *pgxpool.Pool
	big     map[string]bool   // tables of bigTableRows or more
	tableOf map[string]string // index → table
	analyze bool
}

// checkPlans explains each distinct statement of one case and returns a
// one-line summary of their plans.
func (pc planCheck) checkPlans(ctx context.Context, t *testing.T, c planCase, stmts []statement) string {
	t.Helper()
	var (
		used  []string
		parts []string
		seen  = map[string]bool{}
		took  time.Duration
	)
	var allowed []string
	for _, s := range c.seq {
		table, _, _ := strings.Cut(s, ":")
		allowed = append(allowed, table)
	}
	for i, s := range stmts {
		took += s.took
		if seen[s.sql] {
			continue // the sweep's next chunk, say: the same statement again
		}
		seen[s.sql] = true
		plan, text, err := explain(ctx, pc.pool, s)
		if err != nil {
			t.Fatalf("%s statement %d: %v\n%s", c.name, i+1, err, s.sql)
		}
		if pc.analyze {
			// Run again after the store's call, an INSERT may now conflict.
			if analysed, err := explainAnalyze(ctx, pc.pool, s); err == nil {
				text = analysed
			} else {
				text += "\n(not analysed: " + err.Error() + ")"
			}
		}
		t.Logf("%s statement %d:%s\n%s", c.name, i+1, s.sql, text)
		for _, table := range plan.seqScans() {
			if pc.big[table] && !slices.Contains(allowed, table) {
				t.Errorf("%s statement %d reads all of %s (Seq Scan):\n%s\n%s", c.name, i+1, table, s.sql, text)
			}
		}
		used = append(used, plan.indexes()...)
		parts = append(parts, strings.Join(plan.scans(), ", "))
		generic, gtext, err := explainGeneric(ctx, pc.pool, s)
		if err != nil {
			t.Logf("GENERIC %s statement %d: not explained: %v", c.name, i+1, err)
			continue
		}
		var bad []string
		for _, table := range generic.seqScans() {
			if pc.big[table] && !slices.Contains(allowed, table) {
				bad = append(bad, "reads all of "+table)
			}
		}
		// Every wanted index the custom plan uses, the generic one must too.
		for _, w := range c.want {
			for _, ix := range strings.Split(w, "|") {
				if pc.big[pc.tableOf[ix]] && slices.Contains(plan.indexes(), ix) &&
					!slices.Contains(generic.indexes(), ix) {
					bad = append(bad, "not "+ix)
				}
			}
		}
		if name := postgres.StatementName(s.sql); len(bad) > 0 && !postgres.CustomPlan(name) {
			t.Errorf("%s statement %d (%s): its generic plan %s; add it to customPlans (plancache.go)\n%s",
				c.name, i+1, name, strings.Join(bad, ", "), gtext)
		}
	}
	for _, w := range c.want {
		alts := strings.Split(w, "|")
		for _, ix := range alts {
			if _, ok := pc.tableOf[ix]; !ok {
				t.Errorf("%s: index %s does not exist", c.name, ix)
			}
		}
		if !slices.ContainsFunc(alts, func(ix string) bool { return pc.big[pc.tableOf[ix]] }) {
			continue // a small table may rightly be read whole
		}
		if !slices.ContainsFunc(alts, func(ix string) bool { return slices.Contains(used, ix) }) {
			t.Errorf("%s uses none of %s; it uses %v", c.name, w, used)
		}
	}
	return fmt.Sprintf("%d: %s (%s)", len(stmts), strings.Join(parts, "; "), took.Round(10*time.Microsecond))
}

// storeMethods lists the exported methods of *postgres.Store.
func storeMethods() []string {
	typ := reflect.TypeFor[*postgres.Store]()
	var out []string
	for i := range typ.NumMethod() {
		out = append(out, typ.Method(i).Name)
	}
	return out
}

// pick chooses the loaded rows the cases work on.
func pick(ctx context.Context, t *testing.T, pool *pgxpool.Pool, f *planFixture) {
	t.Helper()
	one := func(where string, args ...any) ledger.Operation {
		var tenant, id string
		err := pool.QueryRow(ctx, `SELECT tenant_id, operation_id::text FROM operation_ledger WHERE `+where+` LIMIT 1`,
			args...).Scan(&tenant, &id)
		if err != nil {
			t.Fatalf("pick %s: %v", where, err)
		}
		op, err := f.setup.Get(ctx, tenant, id)
		if err != nil {
			t.Fatal(err)
		}
		return op
	}
	f.settled = one(`tenant_id = 'tenant-1' AND state = 'SUCCEEDED'`)
	f.unknown = one(`state = 'UNKNOWN' AND next_reconcile_at > $1`, f.now)
	f.escalated = []ledger.Operation{
		one(`state = 'ESCALATED' AND tenant_id = 'tenant-3'`),
		one(`state = 'ESCALATED' AND tenant_id = 'tenant-4'`),
	}
	f.escalated = append(f.escalated,
		one(`state = 'ESCALATED' AND tenant_id = 'tenant-3' AND operation_id <> $1`, f.escalated[0].ID))
}
