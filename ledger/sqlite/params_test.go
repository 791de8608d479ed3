package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"settle/ledger/sqlite"
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
