package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"settle/ledger"
	"settle/ledger/sqlite"
)

// The record of human actions is append-only, like the event log.
func TestStore_ActionsAreAppendOnly(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "settle.db")
	s, err := sqlite.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := ledger.NewContextWithActor(context.Background(), ledger.Actor{Subject: "cli:ada", Name: "ada", Role: "admin"})
	if err := s.SetCallback(ctx, "acme", "https://acme.example/cb", make([]byte, 32), time.Now()); err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, stmt := range []string{`UPDATE actions SET subject = 'cli:mallory'`, `DELETE FROM actions`} {
		if _, err := raw.Exec(stmt); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Fatalf("%s: err = %v", stmt, err)
		}
	}
	if acts, err := s.Actions(ctx, ledger.ActionFilter{Tenant: "acme"}); err != nil || len(acts) != 1 || acts[0].Subject != "cli:ada" {
		t.Fatalf("actions %+v, %v", acts, err)
	}
}
