package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"settle/ledger"
	"settle/ledger/sqlite"
	"settle/ledger/storetest"
	"settle/migrations"
)

// The table holds names and values to the ledger's rules whatever writes
// it: a row the ledger would refuse is refused by the schema too.
func TestStore_TenantParamsChecked(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "settle.db")
	s, err := sqlite.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	insert := func(name, value string) error {
		_, err := raw.Exec(`INSERT INTO tenant_params (tenant_id, name, value, updated_at) VALUES ('acme', ?, ?, 1)`, name, value)
		return err
	}
	for _, c := range [][2]string{
		{"Account", "acct_1"}, {"1account", "acct_1"}, {"stripe-account", "acct_1"}, {"", "acct_1"},
		{"a" + strings.Repeat("b", 32), "acct_1"}, {"accöunt", "acct_1"},
		{"account", ""}, {"account", strings.Repeat("x", 257)}, {"account", "acct_1\nX-Evil: 1"},
		{"account", "acct_1\r"}, {"account", "a\tb"}, {"account", "a\u0085b"}, {"account", " acct_1"}, {"account", "acct_1 "},
	} {
		if err := insert(c[0], c[1]); err == nil || !strings.Contains(err.Error(), "CHECK constraint failed") {
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

// Migration 00020 adds tenant_params and the two parameter actions,
// rebuilding the actions table: the recorded actions keep their ids and
// the table stays append-only. It can be rolled back (SQLite drops the
// parameter actions, which the older CHECK cannot hold) and applied again.
func TestMigrate_TenantParams(t *testing.T) {
	t.Parallel()
	ctx := ledger.NewContextWithActor(context.Background(), ledger.Actor{Subject: "cli:ada", Name: "ada", Role: "admin"})
	path := storetest.SQLiteFile(t)
	open := func() *sqlite.Store {
		s, err := sqlite.Open(ctx, path, nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open()
	if err := s.SetCallback(ctx, "acme", "https://acme.example/cb", make([]byte, 32), time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := s.SetTenantParams(ctx, "acme", map[string]string{"account": "acct_1"}, nil, false); err != nil {
		t.Fatal(err)
	}
	before, err := s.Actions(ctx, ledger.ActionFilter{Tenant: "acme"})
	if err != nil || len(before) != 2 {
		t.Fatalf("actions %+v, %v", before, err)
	}
	s.Close()

	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	fsys, err := fs.Sub(migrations.SQLite, "sqlite")
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, db, fsys)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 19); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 'tenant_params'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("tenant_params outlived its migration's Down: %d, %v", n, err)
	}
	if _, err := db.Exec(`INSERT INTO actions (tenant_id, at, subject, role, kind)
		VALUES ('acme', 1, 'cli:ada', 'admin', 'tenant_param.unset')`); err == nil {
		t.Fatal("a parameter action was stored before migration 00020")
	}
	var kinds string
	if err := db.QueryRow(`SELECT group_concat(action_id || ' ' || kind) FROM actions`).Scan(&kinds); err != nil ||
		kinds != fmt.Sprintf("%d callback.set", before[1].ID) {
		t.Fatalf("actions after Down: %q, %v", kinds, err)
	}
	for _, stmt := range []string{`UPDATE actions SET subject = 'cli:mallory'`, `DELETE FROM actions`} {
		if _, err := db.Exec(stmt); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Fatalf("after Down: %s: %v", stmt, err)
		}
	}
	db.Close()

	s = open() // migrates up again
	defer s.Close()
	if got, err := s.TenantParams(ctx, "acme"); err != nil || len(got) != 0 {
		t.Fatalf("params after Up: %v, %v", got, err)
	}
	if err := s.SetTenantParams(ctx, "acme", map[string]string{"account": "acct_2"}, nil, false); err != nil {
		t.Fatal(err)
	}
	after, err := s.Actions(ctx, ledger.ActionFilter{Tenant: "acme"})
	if err != nil || len(after) != 2 || after[1].ID != before[1].ID || after[1].Kind != ledger.ActionCallbackSet ||
		after[0].Kind != ledger.ActionTenantParamSet {
		t.Fatalf("actions after Up: %+v, %v", after, err)
	}
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`DELETE FROM actions`); err == nil || !strings.Contains(err.Error(), "append-only") {
		t.Fatalf("after Up: delete: %v", err)
	}
}
