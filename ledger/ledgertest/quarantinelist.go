package ledgertest

import (
	"slices"
	"testing"
	"time"

	"settle/ledger"
)

// A page of the quarantine continues after its last row (After), so an
// item resolved meanwhile moves no other across pages; Ref finds an item
// by any reference as pasted, and the filters narrow in the store.
func testListQuarantinePages(t *testing.T, h Harness) {
	f, rs, in := reviewSetup(t, h)
	var ids []int64
	for range 5 {
		ids = append(ids, f.quarantined(in, "acme")) // evt-1…5, ref-1…5, ch_1…5
		f.clk.Advance(time.Hour)
	}
	other, err := in.Quarantine(f.ctx, ledger.QuarantineItem{Target: "ledger-b", Reason: "Contradicts the ledger",
		EventID: "EVT-Other", Tenant: "acme", OperationID: "0190abcd-1234-7000-8000-000000000001", OpTenant: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	list := func(fl ledger.QuarantineFilter) []int64 {
		t.Helper()
		fl.Tenants = []string{"acme"}
		items, err := rs.ListQuarantine(f.ctx, fl)
		if err != nil {
			t.Fatal(err)
		}
		out := []int64{}
		for _, q := range items {
			out = append(out, q.ID)
		}
		return out
	}
	first := list(ledger.QuarantineFilter{Open: true, Limit: 2})
	if !slices.Equal(first, []int64{other, ids[4]}) {
		t.Fatalf("first page = %v, want %v", first, []int64{other, ids[4]})
	}
	// A colleague dismisses an item of the first page before Next.
	if err := rs.ResolveQuarantine(f.as("oidc:ada", "Ada Admin", "admin"), "acme", ids[4], "handled"); err != nil {
		t.Fatal(err)
	}
	if q := item(t, f, rs, ids[4]); q.ResolvedAs != ledger.QuarantineDismissed || q.ResolvedByRole != "admin" ||
		q.ResolvedByName != "Ada Admin" {
		t.Fatalf("dismissed item records %q by %q in role %q", q.ResolvedAs, q.ResolvedByName, q.ResolvedByRole)
	}
	second := list(ledger.QuarantineFilter{Open: true, Limit: 2, After: first[len(first)-1]})
	if !slices.Equal(second, []int64{ids[3], ids[2]}) {
		t.Fatalf("second page = %v, want %v", second, []int64{ids[3], ids[2]})
	}
	for _, c := range []struct {
		name string
		fl   ledger.QuarantineFilter
		want []int64
	}{
		{"Resolved", ledger.QuarantineFilter{Resolved: true}, []int64{ids[4]}},
		{"EventIDAnyCase", ledger.QuarantineFilter{Ref: "  evt-other "}, []int64{other}},
		{"ClaimedReference", ledger.QuarantineFilter{Ref: "REF-2"}, []int64{ids[1]}},
		{"ObjectID", ledger.QuarantineFilter{Ref: "ch_3"}, []int64{ids[2]}},
		{"OperationPrefix", ledger.QuarantineFilter{Ref: "0190ABCD-12"}, []int64{other}},
		{"ShortPrefixIsNoPrefix", ledger.QuarantineFilter{Ref: "0190"}, []int64{}},
		{"Target", ledger.QuarantineFilter{Target: "ledger-b"}, []int64{other}},
		{"Reason", ledger.QuarantineFilter{Reason: "contradicts"}, []int64{other}},
		{"Age", ledger.QuarantineFilter{Before: new(f.clk.Now().Add(-3*time.Hour - time.Minute))}, []int64{ids[1], ids[0]}},
	} {
		if got := list(c.fl); !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}

	// The age filter also bounds the walk by id (the newest id older than
	// the cutoff): an item whose time is older than its id says (another
	// replica's clock behind) is still found, and a page continues.
	cutoff := f.clk.Now().Add(-3*time.Hour - time.Minute)
	f.clk.Advance(-24 * time.Hour)
	late := f.quarantined(in, "acme")
	f.clk.Advance(24 * time.Hour)
	for _, c := range []struct {
		name string
		fl   ledger.QuarantineFilter
		want []int64
	}{
		{"AgeLateArrival", ledger.QuarantineFilter{Before: &cutoff}, []int64{late, ids[1], ids[0]}},
		{"AgePage", ledger.QuarantineFilter{Before: &cutoff, After: late, Limit: 1}, []int64{ids[1]}},
		{"AgeOlderThanAll", ledger.QuarantineFilter{Before: new(f.clk.Now().Add(-48 * time.Hour))}, []int64{}},
	} {
		if got := list(c.fl); !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}
