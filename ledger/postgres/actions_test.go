package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"settle/ledger"
)

// The record of human actions is append-only, like the event log.
func TestStore_ActionsAreAppendOnly(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := ledger.NewContextWithActor(context.Background(), ledger.Actor{Subject: "cli:ada", Name: "ada", Role: "admin"})
	if err := s.SetCallback(ctx, "acme", "https://acme.example/cb", make([]byte, 32), time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{`UPDATE actions SET subject = 'cli:mallory'`, `DELETE FROM actions`} {
		if _, err := s.Pool().Exec(ctx, stmt); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Fatalf("%s: err = %v", stmt, err)
		}
	}
	if acts, err := s.Actions(ctx, ledger.ActionFilter{Tenant: "acme"}); err != nil || len(acts) != 1 || acts[0].Subject != "cli:ada" {
		t.Fatalf("actions %+v, %v", acts, err)
	}
}
