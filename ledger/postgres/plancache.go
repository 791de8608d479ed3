package postgres

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"settle/ledger/postgres/internal/dbsqlc"
)

// customPlans names the statements that must be planned for their
// arguments on every execution. pgx prepares and caches every statement,
// and under plan_cache_mode=auto (PostgreSQL's default, and settle's since
// the hot path's plans were checked) the server may keep a statement's
// generic plan, made from the statistics alone, after five executions.
// TestPlans explains each statement's generic plan beside its custom one
// and fails when the generic plan reads a large table whole, or drops an
// index the custom plan uses, for a statement not named here: these are
// the ones whose plans depend on their arguments (a tenant set, a state
// the partial indexes name, a filter that may be empty).
var customPlans = map[string]bool{
	// The record of outcomes and the reconciler's lease: their generic
	// plans made on an empty table read operation_ledger whole
	// (TestPlans_SmallTables), and such a plan would stay until an
	// analyse while the table grew. Each runs once per batch, so planning
	// it every time costs little.
	"OperationRecord":        true,
	"OperationLeaseDue":      true,
	"OperationListTenants":   true,
	"QueueList":              true,
	"StateCount":             true,
	"AuditFinalBatch":        true,
	"OperationCountInStates": true,
	"RetentionRedact":        true,
	"PurgeDeliveries":        true,
	// and, at 1,000,000 operations (scripts/plans-10m.sh with ROWS), the
	// quarantine's list and the retention and erasure statements over
	// quarantine and payload_conflicts, whose generic plans read them
	// whole once they are large:
	"QuarantineList":           true,
	"RetentionCount":           true,
	"OperationConflictsDelete": true,
	"PurgeQuarantine":          true,
	"ErasureQuarantineDelete":  true,
	"ErasureConflictsDelete":   true,
}

// planned is a connection that sends the customPlans statements as
// unnamed statements (pgx.QueryExecModeCacheDescribe: their description
// cached, no prepared plan), so that the server plans them for their
// arguments every time, and every other statement as pgx's cached
// prepared statement.
type planned struct{ dbsqlc.DBTX }

func withPlanMode(sql string, args []any) []any {
	if !customPlans[statementName(sql)] {
		return args
	}
	return append([]any{pgx.QueryExecModeCacheDescribe}, args...)
}

// statementName is the sqlc name of a statement ("-- name: X :one"), or
// "" for one that is not sqlc's.
func statementName(sql string) string {
	_, rest, ok := strings.Cut(sql, "-- name: ")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, " ")
	return name
}

// Query implements dbsqlc.DBTX.
func (p planned) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return p.DBTX.Query(ctx, sql, withPlanMode(sql, args)...)
}

// QueryRow implements dbsqlc.DBTX.
func (p planned) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return p.DBTX.QueryRow(ctx, sql, withPlanMode(sql, args)...)
}

// Exec implements dbsqlc.DBTX.
func (p planned) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	return p.DBTX.Exec(ctx, sql, withPlanMode(sql, args)...)
}
