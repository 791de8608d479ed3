package postgres_test

import (
	"context"
	"strings"
	"testing"
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
