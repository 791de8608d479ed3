package web

import (
	"slices"
	"strings"
	"testing"

	"settle/auth"
	"settle/ledger"
	"settle/resolve"
)

// Unattributed items (no tenant) reach only people trusted with every
// tenant; owners see their own targets' items; the filter asks the store
// for no more than the bindings allow.
func TestQuarantineScope(t *testing.T) {
	t.Parallel()
	items := []ledger.QuarantineItem{
		{ID: 1, Target: "payments", Tenant: "acme"},
		{ID: 2, Target: "refunds", Tenant: "acme"},
		{ID: 3, Target: "payments"}, // unattributed
		{ID: 4, Target: "payments", Tenant: "evil", OperationID: "op", OpTenant: "globex"},
	}
	for name, tc := range map[string]struct {
		p      *auth.Principal
		filter ledger.QuarantineFilter
		want   []int64
	}{
		"Owner": {&auth.Principal{Bindings: []auth.Binding{{Role: auth.Owner, Tenants: []string{"acme"}, Targets: []string{"payments"}}}},
			ledger.QuarantineFilter{Open: true, Tenants: []string{"acme"}}, []int64{1}},
		"TenantAdmin": {&auth.Principal{Bindings: []auth.Binding{{Role: auth.Admin, Tenants: []string{"acme", "globex"}}}},
			ledger.QuarantineFilter{Open: true, Tenants: []string{"acme", "globex"}}, []int64{1, 2, 4}},
		"AllTenantsAdmin": {&auth.Principal{Bindings: []auth.Binding{{Role: auth.Admin}}},
			ledger.QuarantineFilter{Open: true, AllTenants: true, Unattributed: true}, []int64{1, 2, 3, 4}},
		"Support": {&auth.Principal{Bindings: []auth.Binding{{Role: auth.Support}}},
			ledger.QuarantineFilter{Open: true}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			if got := quarantineScope(tc.p, true); !equalFilter(got, tc.filter) {
				t.Errorf("filter %+v, want %+v", got, tc.filter)
			}
			var got []int64
			for _, q := range resolve.Visible(reviewerScope{tc.p}, items) {
				got = append(got, q.ID)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("visible %v, want %v", got, tc.want)
			}
		})
	}
}

func equalFilter(a, b ledger.QuarantineFilter) bool {
	return a.Open == b.Open && a.AllTenants == b.AllTenants && a.Unattributed == b.Unattributed &&
		slices.Equal(a.Tenants, b.Tenants)
}

// Every finding kind reads as what happened and who acts, never as a
// verdict on the operation.
func TestFindingText(t *testing.T) {
	t.Parallel()
	for kind, want := range map[ledger.FindingKind][2]string{
		ledger.FindingDuplicate: {"Duplicate at payments: 3 objects", "reverses the extra ones"},
		ledger.FindingLoss:      {"Missing at payments", "tells the tenant if it was lost"},
		ledger.FindingPhantom:   {"Found at payments: an object for an operation settle calls Not applied", "reverses it or tells the tenant"},
	} {
		title, meaning := findingText(ledger.Finding{Kind: kind, Target: "payments", RemoteIDs: []string{"a", "b", "c"}}, "Payments team")
		if !strings.HasPrefix(title, want[0]) || !strings.Contains(meaning, want[1]) || !strings.Contains(meaning, "Payments team") {
			t.Errorf("%s: %q / %q", kind, title, meaning)
		}
	}
}
