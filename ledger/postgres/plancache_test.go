package postgres

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestCustomPlans_NameRealStatements: every name in customPlans is a
// statement of internal/dbsqlc, so a renamed statement cannot silently
// fall back to a generic plan, and only those statements carry the
// unnamed-statement mode.
func TestCustomPlans_NameRealStatements(t *testing.T) {
	files, err := filepath.Glob("internal/dbsqlc/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no sqlc queries: %v", err)
	}
	var all strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
	}
	for name := range customPlans {
		if !strings.Contains(all.String(), "-- name: "+name+" ") {
			t.Errorf("customPlans names %s, which is no statement of internal/dbsqlc", name)
		}
		args := withPlanMode("-- name: "+name+" :many\nSELECT 1", []any{1})
		if len(args) != 2 || args[0] != pgx.QueryExecModeCacheDescribe {
			t.Errorf("%s is not sent as an unnamed statement: %v", name, args)
		}
	}
	if args := withPlanMode("-- name: OperationClaim :one\nUPDATE …", []any{1}); len(args) != 1 {
		t.Errorf("OperationClaim is sent with %v; want its cached prepared statement", args)
	}
}
