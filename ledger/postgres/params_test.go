package postgres_test

import (
	"context"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/postgres"
	"settle/ledger/postgres/pgtest"
	"settle/migrations"
)

// The table holds names and values to the ledger's rules whatever writes
// it: a row the ledger would refuse is refused by the schema too.
func TestStore_TenantParamsChecked(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	insert := func(name, value string) error {
		_, err := s.Pool().Exec(ctx, `INSERT INTO tenant_params (tenant_id, name, value, updated_at)
			VALUES ('acme', $1, $2, now())`, name, value)
		return err
	}
	for _, c := range [][2]string{
		{"Account", "acct_1"}, {"1account", "acct_1"}, {"stripe-account", "acct_1"}, {"", "acct_1"},
		{"a" + strings.Repeat("b", 32), "acct_1"}, {"accöunt", "acct_1"},
		{"account", ""}, {"account", strings.Repeat("x", 257)}, {"account", "acct_1\nX-Evil: 1"},
		{"account", "acct_1\r"}, {"account", "a\tb"}, {"account", "a\u0085b"}, {"account", " acct_1"}, {"account", "acct_1 "},
	} {
		if err := insert(c[0], c[1]); err == nil || !strings.Contains(err.Error(), "tenant_params_") {
			t.Errorf("insert %q = %q: %v; want a check violation", c[0], c[1], err)
		}
	}
	for _, c := range [][2]string{
		{"a" + strings.Repeat("_", 31), strings.Repeat("é", 256)}, {"account", "Acme GmbH & Co. KG"},
	} {
		if err := insert(c[0], c[1]); err != nil {
			t.Errorf("insert %q: %v", c[0], err)
		}
	}
}

// Migration 00020 adds tenant_params and the two parameter actions; it can
// be rolled back (the recorded actions stay: the record is append-only)
// and applied again.
func TestMigrate_TenantParams(t *testing.T) {
	t.Parallel()
	ctx := ledger.NewContextWithActor(context.Background(), ledger.Actor{Subject: "cli:ada", Name: "ada", Role: "admin"})
	pool := pgtest.Pool(t, pgtest.Schema(t))
	s := postgres.New(pool, ledgertest.NewClock().Now)
	if err := s.SetCallback(ctx, "acme", "https://acme.example/cb", make([]byte, 32), time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := s.SetTenantParams(ctx, "acme", map[string]string{"account": "acct_1"}, nil, false); err != nil {
		t.Fatal(err)
	}
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	fsys, err := fs.Sub(migrations.Postgres, "postgres")
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, fsys)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 19); err != nil {
		t.Fatal(err)
	}
	if _, err := s.TenantParams(ctx, "acme"); err == nil {
		t.Fatal("tenant_params outlived its migration's Down")
	}
	if err := s.RemoveCallback(ctx, "acme"); err != nil {
		t.Fatalf("the older action kinds after Down: %v", err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO actions (tenant_id, at, subject, role, kind)
		VALUES ('acme', now(), 'cli:ada', 'admin', 'tenant_param.unset')`); err == nil {
		t.Fatal("a parameter action was stored before migration 00020")
	}
	if acts, err := s.Actions(ctx, ledger.ActionFilter{Tenant: "acme"}); err != nil || len(acts) != 3 ||
		acts[1].Kind != ledger.ActionTenantParamSet {
		t.Fatalf("actions after Down: %+v, %v", acts, err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := s.TenantParams(ctx, "acme"); err != nil || len(got) != 0 {
		t.Fatalf("params after Up: %v, %v", got, err)
	}
	if err := s.SetTenantParams(ctx, "acme", nil, []string{"account"}, false); err != nil {
		t.Fatal(err)
	}
	if err := s.SetTenantParams(ctx, "acme", map[string]string{"account": "acct_2"}, nil, false); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `DELETE FROM actions`); err == nil || !strings.Contains(err.Error(), "append-only") {
		t.Fatalf("actions after Up: delete: %v", err)
	}
}
