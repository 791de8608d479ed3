package ledger_test

import (
	"slices"
	"testing"

	"settle/ledger"
)

func TestNewStateCounts(t *testing.T) {
	t.Parallel()
	c := ledger.NewStateCounts(map[ledger.State]int{
		ledger.Succeeded: ledger.CountCap + 1, ledger.Unknown: ledger.CountCap, ledger.Escalated: 3,
	})
	for _, s := range ledger.States {
		want, capped := 0, false
		switch s {
		case ledger.Succeeded:
			want, capped = ledger.CountCap, true
		case ledger.Unknown:
			want = ledger.CountCap
		case ledger.Escalated:
			want = 3
		}
		if n, ok := c.Counts[s]; !ok || n != want || c.Capped[s] != capped {
			t.Errorf("%s: %d (present %v, capped %v), want %d (capped %v)", s, n, ok, c.Capped[s], want, capped)
		}
	}
}

// TestListFilter_TenantSet: what is given together narrows, never widens.
func TestListFilter_TenantSet(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		f       ledger.ListFilter
		want    []string
		wantAll bool
	}{
		{"Tenant", ledger.ListFilter{Tenant: "acme"}, []string{"acme"}, false},
		{"Tenants", ledger.ListFilter{Tenants: []string{"b", "a", "b"}}, []string{"a", "b"}, false},
		{"All", ledger.ListFilter{AllTenants: true}, nil, true},
		{"TenantWithinTenants", ledger.ListFilter{Tenant: "a", Tenants: []string{"a", "b"}}, []string{"a"}, false},
		{"TenantOutsideTenants", ledger.ListFilter{Tenant: "c", Tenants: []string{"a", "b"}}, []string{}, false},
		{"TenantWithinAll", ledger.ListFilter{Tenant: "c", AllTenants: true}, []string{"c"}, false},
		{"TenantsWithinAll", ledger.ListFilter{Tenants: []string{"a"}, AllTenants: true}, []string{"a"}, false},
	} {
		if _, err := c.f.Normalize(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, all := c.f.TenantSet()
		if !slices.Equal(got, c.want) || all != c.wantAll || (got == nil) != (c.want == nil) {
			t.Errorf("%s: %q all=%v, want %q all=%v", c.name, got, all, c.want, c.wantAll)
		}
	}
}
