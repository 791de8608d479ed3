package ledgertest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"settle/ledger"
)

// testBrowse covers what the console reads (ledger.Browser and List over a
// set of tenants) against a model: every filter combination lists, page by
// page, exactly the operations the model selects, in order, and counts
// them; no other tenant's operation is ever listed, counted or found.
func testBrowse(t *testing.T, h Harness) {
	t.Run("Filters", func(t *testing.T) { testBrowseFilters(t, h) })
	t.Run("PagesAcrossTenants", func(t *testing.T) { testBrowsePages(t, h) })
	t.Run("Search", func(t *testing.T) { testSearch(t, h) })
	t.Run("SearchLimit", func(t *testing.T) { testSearchLimit(t, h) })
	t.Run("SearchObjects", func(t *testing.T) { testSearchObjects(t, h) })
	t.Run("Invalid", func(t *testing.T) { testBrowseInvalid(t, h) })
}

func browser(t *testing.T, s ledger.Store) ledger.Browser {
	t.Helper()
	b, ok := s.(ledger.Browser)
	if !ok {
		t.Fatal("store does not implement ledger.Browser")
	}
	return b
}

// createIn creates an operation of tenant for target and drives it to st.
// IN_FLIGHT holds a long lease, so that making UNKNOWN ones (a short lease,
// expired and swept) leaves it alone.
func (f *fixture) createIn(tenant, target string, st ledger.State) ledger.Operation {
	f.t.Helper()
	n := f.newOp(tenant)
	n.Target = target
	op, _, err := f.store.Create(f.ctx, n)
	if err != nil || st == ledger.Prepared {
		if err != nil {
			f.t.Fatalf("create: %v", err)
		}
		return op
	}
	lease := 24 * time.Hour
	if st == ledger.Unknown {
		lease = time.Second
	}
	if op, err = f.store.Claim(f.ctx, op.Tenant, op.ID, op.PayloadHash, lease); err != nil {
		f.t.Fatalf("claim: %v", err)
	}
	switch st {
	case ledger.InFlight:
		return op
	case ledger.Unknown:
		f.clk.Advance(2 * time.Second)
		if n, err := f.store.SweepExpired(f.ctx); err != nil || n != 1 {
			f.t.Fatalf("sweep: %d swept, %v", n, err)
		}
		return f.get(op)
	}
	return f.record(op, ledger.InFlight, st)
}

// newestFirst sorts ops as listings return them.
func newestFirst(ops []ledger.Operation) {
	slices.SortFunc(ops, func(a, b ledger.Operation) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
}

// listAll pages through what f lists, limit operations a page.
func listAll(t *testing.T, f *fixture, lf ledger.ListFilter) []ledger.Operation {
	t.Helper()
	var out []ledger.Operation
	for pages := 0; ; pages++ {
		page, err := f.store.List(f.ctx, lf)
		if err != nil {
			t.Fatalf("list %+v: %v", lf, err)
		}
		if pages > 100 {
			t.Fatalf("list %+v: no last page", lf)
		}
		out = append(out, page.Operations...)
		if page.Next == "" {
			return out
		}
		lf.Cursor = page.Next
	}
}

func ids(ops []ledger.Operation) []string {
	out := make([]string, len(ops))
	for i, op := range ops {
		out[i] = op.Tenant + "/" + op.ID[:8] + "/" + string(op.State)
	}
	return out
}

func testBrowseFilters(t *testing.T, h Harness) {
	f := setup(t, h)
	b := browser(t, f.store)
	var all []ledger.Operation
	for i := 0; i < 2; i++ {
		for _, st := range ledger.States {
			for _, tenant := range []string{"acme", "globex", "initech"} {
				for _, target := range []string{"payments", "payouts"} {
					all = append(all, f.createIn(tenant, target, st))
					if len(all)%3 != 0 {
						f.clk.Advance(time.Millisecond) // some share a created_at
					}
				}
			}
		}
	}
	for i, op := range all {
		all[i] = f.get(op) // as stored now: sweeps moved the clock, not the states
	}
	newestFirst(all)
	t1, t2 := all[len(all)*3/4].CreatedAt, all[len(all)/4].CreatedAt
	// An intent reference names one operation of a tenant, however wide
	// the set it is looked for in.
	for _, lf := range []ledger.ListFilter{
		{AllTenants: true, IntentRef: all[5].IntentRef},
		{Tenants: []string{"acme", "globex", "initech"}, IntentRef: all[5].IntentRef, State: all[5].State},
	} {
		if got := listAll(t, f, lf); !slices.Equal(ids(got), ids(all[5:6])) {
			t.Errorf("by intent %+v: %v, want %v", lf, ids(got), ids(all[5:6]))
		}
	}

	type tenantSet struct {
		name string
		set  func(*ledger.ListFilter)
		has  func(string) bool
	}
	sets := []tenantSet{
		{"Tenant", func(lf *ledger.ListFilter) { lf.Tenant = "acme" }, func(s string) bool { return s == "acme" }},
		{"OneOfTenants", func(lf *ledger.ListFilter) { lf.Tenants = []string{"globex"} }, func(s string) bool { return s == "globex" }},
		{"Tenants", func(lf *ledger.ListFilter) { lf.Tenants = []string{"initech", "acme", "acme"} },
			func(s string) bool { return s == "acme" || s == "initech" }},
		{"UnknownTenants", func(lf *ledger.ListFilter) { lf.Tenants = []string{"hooli", "acme"} }, func(s string) bool { return s == "acme" }},
		{"AllTenants", func(lf *ledger.ListFilter) { lf.AllTenants = true }, func(string) bool { return true }},
		// The tenant asked for, within those a person may see.
		{"TenantWithinTenants", func(lf *ledger.ListFilter) { lf.Tenant, lf.Tenants = "globex", []string{"acme", "globex"} },
			func(s string) bool { return s == "globex" }},
		{"TenantOutsideTenants", func(lf *ledger.ListFilter) { lf.Tenant, lf.Tenants = "initech", []string{"acme", "globex"} },
			func(string) bool { return false }},
		{"TenantWithinAll", func(lf *ledger.ListFilter) { lf.Tenant, lf.AllTenants = "initech", true },
			func(s string) bool { return s == "initech" }},
		{"TenantsWithinAll", func(lf *ledger.ListFilter) { lf.Tenants, lf.AllTenants = []string{"globex"}, true },
			func(s string) bool { return s == "globex" }},
	}
	type window struct {
		name          string
		after, before *time.Time
	}
	windows := []window{{"AnyAge", nil, nil}, {"After", &t1, nil}, {"Before", nil, &t2}, {"Between", &t1, &t2}}
	for _, ts := range sets {
		for _, target := range []string{"", "payouts"} {
			for _, w := range windows {
				base := ledger.ListFilter{Target: target, CreatedAfter: w.after, CreatedBefore: w.before}
				ts.set(&base)
				match := func(op ledger.Operation) bool {
					return ts.has(op.Tenant) && (target == "" || op.Target == target) &&
						(w.after == nil || !op.CreatedAt.Before(*w.after)) && (w.before == nil || op.CreatedAt.Before(*w.before))
				}
				name := fmt.Sprintf("%s/%s/%s", ts.name, cmpOr(target, "AnyTarget"), w.name)
				want := map[ledger.State]int{}
				for _, st := range append([]ledger.State{""}, ledger.States...) {
					lf := base
					lf.State, lf.Limit = st, 4
					var wantOps []ledger.Operation
					for _, op := range all {
						if match(op) && (st == "" || op.State == st) {
							wantOps = append(wantOps, op)
						}
					}
					if st != "" {
						want[st] = len(wantOps)
					}
					if got := listAll(t, f, lf); !slices.Equal(ids(got), ids(wantOps)) {
						t.Errorf("%s/%s: listed\n%v\nwant\n%v", name, cmpOr(string(st), "AnyState"), ids(got), ids(wantOps))
					}
				}
				// Counts ignore the state, limit and cursor.
				lf := base
				lf.State, lf.Limit, lf.Cursor = ledger.Escalated, 1, "garbage"
				counts, err := b.CountByState(f.ctx, lf)
				if err != nil {
					t.Fatalf("%s: count: %v", name, err)
				}
				for _, st := range ledger.States {
					if counts.Counts[st] != want[st] || counts.Capped[st] {
						t.Errorf("%s: counted %d %s (capped %v), want %d", name, counts.Counts[st], st, counts.Capped[st], want[st])
					}
				}
			}
		}
	}
}

func cmpOr(s, or string) string {
	if s == "" {
		return or
	}
	return s
}

// testBrowsePages: a listing across tenants pages by (created_at, id) even
// where tenants share a created_at, and its pages stay put while newer
// operations arrive.
func testBrowsePages(t *testing.T, h Harness) {
	f := setup(t, h)
	var ops []ledger.Operation
	for i := 0; i < 5; i++ {
		for _, tenant := range []string{"acme", "globex", "initech", "hooli"} {
			op := f.create(tenant)
			if tenant != "hooli" {
				ops = append(ops, op)
			}
		}
		if i%2 == 1 {
			f.clk.Advance(time.Millisecond)
		}
	}
	newestFirst(ops)
	listed := map[string]bool{}
	for _, op := range ops {
		listed[op.ID] = true
	}
	for _, lf := range []ledger.ListFilter{
		{Tenants: []string{"acme", "globex", "initech"}, Limit: 2},
		{AllTenants: true, Limit: 2},
	} {
		var got []ledger.Operation
		for page := 0; ; page++ {
			p, err := f.store.List(f.ctx, lf)
			if err != nil {
				t.Fatal(err)
			}
			if lf.AllTenants { // hooli's, and those made while paging
				p.Operations = slices.DeleteFunc(p.Operations, func(op ledger.Operation) bool { return !listed[op.ID] })
			}
			got = append(got, p.Operations...)
			if page == 1 {
				f.create("acme") // newer than all: never on a later page
			}
			if p.Next == "" {
				break
			}
			lf.Cursor = p.Next
		}
		if !slices.Equal(ids(got), ids(ops)) {
			t.Fatalf("all=%v: paged\n%v\nwant\n%v", lf.AllTenants, ids(got), ids(ops))
		}
	}
}

func testSearch(t *testing.T, h Harness) {
	f := setup(t, h)
	b := browser(t, f.store)
	a := f.inState("acme", ledger.Succeeded)
	// The same intent reference in another tenant, newer.
	n := f.newOp("globex")
	n.IntentRef = a.IntentRef
	f.clk.Advance(time.Millisecond)
	g, _, err := f.store.Create(f.ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	f.create("acme")
	an := f.newOp("acme")
	an.IntentRef = "caf\u00e9-7"
	accent, _, err := f.store.Create(f.ctx, an)
	if err != nil {
		t.Fatal(err)
	}
	acme := []string{"acme"}
	for _, c := range []struct {
		name    string
		f       ledger.SearchFilter
		want    []ledger.Operation
		wantNot string
	}{
		{"ByID", ledger.SearchFilter{Tenants: acme, Ref: a.ID}, []ledger.Operation{a}, ""},
		{"ByIDUpperCase", ledger.SearchFilter{Tenants: acme, Ref: strings.ToUpper(a.ID)}, []ledger.Operation{a}, ""},
		{"ByRemoteKey", ledger.SearchFilter{Tenants: acme, Ref: a.RemoteKey}, []ledger.Operation{a}, ""},
		{"ByRemoteRef", ledger.SearchFilter{Tenants: acme, Ref: a.RemoteRef}, []ledger.Operation{a}, ""},
		{"ByIntent", ledger.SearchFilter{Tenants: acme, Ref: a.IntentRef}, []ledger.Operation{a}, ""},
		{"ByIntentInTenants", ledger.SearchFilter{Tenants: []string{"globex", "acme"}, Ref: a.IntentRef}, []ledger.Operation{g, a}, ""},
		{"ByIntentInAll", ledger.SearchFilter{AllTenants: true, Ref: a.IntentRef}, []ledger.Operation{g, a}, ""},
		{"ByIDInAll", ledger.SearchFilter{AllTenants: true, Ref: g.ID}, []ledger.Operation{g}, ""},
		{"ByRemoteKeyInAll", ledger.SearchFilter{AllTenants: true, Ref: g.RemoteKey}, []ledger.Operation{g}, ""},
		{"ByRemoteRefInAll", ledger.SearchFilter{AllTenants: true, Ref: a.RemoteRef}, []ledger.Operation{a}, ""},
		{"TenantsWithinAll", ledger.SearchFilter{AllTenants: true, Tenants: acme, Ref: g.ID}, nil, ""},
		// Another tenant's operation is not there, by any of its references.
		{"OtherTenantID", ledger.SearchFilter{Tenants: []string{"globex"}, Ref: a.ID}, nil, ""},
		{"OtherTenantRemoteKey", ledger.SearchFilter{Tenants: []string{"globex", "initech"}, Ref: a.RemoteKey}, nil, ""},
		{"OtherTenantRemoteRef", ledger.SearchFilter{Tenants: []string{"globex"}, Ref: a.RemoteRef}, nil, ""},
		{"OtherTenantIntent", ledger.SearchFilter{Tenants: []string{"initech"}, Ref: a.IntentRef}, nil, ""},
		{"Nothing", ledger.SearchFilter{AllTenants: true, Ref: "no-such-reference"}, nil, ""},
		// What a person pastes: white space around it, another case, the
		// decomposed form of an accent, the first part of an id.
		{"IntentSpaces", ledger.SearchFilter{Tenants: acme, Ref: "  " + a.IntentRef + " \t"}, []ledger.Operation{a}, ""},
		{"IntentOtherCase", ledger.SearchFilter{Tenants: acme, Ref: strings.ToUpper(a.IntentRef)}, []ledger.Operation{a}, ""},
		{"IntentOtherCaseInAll", ledger.SearchFilter{AllTenants: true, Ref: strings.ToUpper(a.IntentRef)}, []ledger.Operation{g, a}, ""},
		{"IntentOtherCaseOtherTenant", ledger.SearchFilter{Tenants: []string{"initech"}, Ref: strings.ToUpper(a.IntentRef)}, nil, ""},
		{"IntentDecomposed", ledger.SearchFilter{Tenants: acme, Ref: "cafe\u0301-7"}, []ledger.Operation{accent}, ""},
		{"IDPrefix", ledger.SearchFilter{Tenants: acme, Ref: a.ID[:8]}, []ledger.Operation{a}, ""},
		{"IDPrefixDashed", ledger.SearchFilter{Tenants: acme, Ref: strings.ToUpper(a.ID[:13])}, []ledger.Operation{a}, ""},
		{"IDPrefixOtherTenant", ledger.SearchFilter{Tenants: []string{"globex"}, Ref: a.ID[:8]}, nil, ""},
		{"IDPrefixTooShort", ledger.SearchFilter{Tenants: acme, Ref: a.ID[:7]}, nil, ""},
	} {
		got, err := b.Search(f.ctx, c.f)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !slices.Equal(ids(got), ids(c.want)) {
			t.Errorf("%s: found %v, want %v", c.name, ids(got), ids(c.want))
		}
		for _, op := range got {
			if op.Payload != nil {
				t.Errorf("%s: loaded the payload", c.name)
			}
		}
	}
}

// testSearchObjects: every object id settle has seen for an operation
// finds it (a duplicate finding's second charge, the ids a lookup's answer
// named), in its tenant only.
func testSearchObjects(t *testing.T, h Harness) {
	f, as := auditSetup(t, h)
	b := browser(t, f.store)
	a := f.succeededOn("acme", "payments")
	if _, err := as.RecordFinding(f.ctx, ledger.Finding{Tenant: "acme", OperationID: a.ID, Kind: ledger.FindingDuplicate,
		RemoteIDs: []string{a.RemoteRef, "ch_second_7"}}); err != nil {
		t.Fatal(err)
	}
	// A lookup that found two objects and one that named an object.
	u := f.unknown("globex")
	u = f.lease(u)
	o := outcome(u, ledger.Unknown, ledger.Escalated)
	o.Evidence = map[string]any{"remote_ids": []string{"ch_g1", "ch_g2"}}
	u, err := f.store.Record(f.ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	w := f.lease(f.unknown("globex"))
	o = outcome(w, ledger.Unknown, ledger.Unknown)
	o.Evidence = map[string]any{"remote_id": "ch_pending_3"}
	if w, err = f.store.Record(f.ctx, o); err != nil {
		t.Fatal(err)
	}
	acme, globex := []string{"acme"}, []string{"globex"}
	for _, c := range []struct {
		name string
		f    ledger.SearchFilter
		want []ledger.Operation
	}{
		{"FindingSecondID", ledger.SearchFilter{Tenants: acme, Ref: "ch_second_7"}, []ledger.Operation{a}},
		{"FindingSecondIDSpaces", ledger.SearchFilter{Tenants: acme, Ref: " ch_second_7 "}, []ledger.Operation{a}},
		{"FindingSecondIDInAll", ledger.SearchFilter{AllTenants: true, Ref: "ch_second_7"}, []ledger.Operation{a}},
		{"FindingSecondIDOtherTenant", ledger.SearchFilter{Tenants: globex, Ref: "ch_second_7"}, nil},
		{"ConfirmedID", ledger.SearchFilter{Tenants: acme, Ref: a.RemoteRef}, []ledger.Operation{a}},
		{"LookupIDs", ledger.SearchFilter{Tenants: globex, Ref: "ch_g2"}, []ledger.Operation{u}},
		{"LookupIDsInTenants", ledger.SearchFilter{Tenants: []string{"acme", "globex"}, Ref: "ch_g1"}, []ledger.Operation{u}},
		{"LookupIDOtherTenant", ledger.SearchFilter{Tenants: acme, Ref: "ch_g1"}, nil},
		{"LookupPendingID", ledger.SearchFilter{Tenants: globex, Ref: "ch_pending_3"}, []ledger.Operation{w}},
	} {
		got, err := b.Search(f.ctx, c.f)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !slices.Equal(ids(got), ids(c.want)) {
			t.Errorf("%s: found %v, want %v", c.name, ids(got), ids(c.want))
		}
	}
}

// testSearchLimit: a reference that many operations share finds the
// newest MaxSearchResults.
func testSearchLimit(t *testing.T, h Harness) {
	f := setup(t, h)
	b := browser(t, f.store)
	var ops []ledger.Operation
	for i := 0; i < ledger.MaxSearchResults+2; i++ {
		n := f.newOp([]string{"acme", "globex"}[i%2])
		n.IntentRef, n.Type = "shared", fmt.Sprintf("charge-%d", i)
		op, _, err := f.store.Create(f.ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		ops = append(ops, op)
		f.clk.Advance(time.Millisecond)
	}
	newestFirst(ops)
	got, err := b.Search(f.ctx, ledger.SearchFilter{Tenants: []string{"acme", "globex"}, Ref: "shared"})
	if err != nil || !slices.Equal(ids(got), ids(ops[:ledger.MaxSearchResults])) {
		t.Fatalf("found %d (%v), want the newest %d", len(got), err, ledger.MaxSearchResults)
	}
}

func testBrowseInvalid(t *testing.T, h Harness) {
	f := setup(t, h)
	b := browser(t, f.store)
	now := f.clk.Now()
	later, huge := now.Add(time.Hour), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	many := make([]string, ledger.MaxFilterTenants+1)
	for i := range many {
		many[i] = fmt.Sprintf("t%d", i)
	}
	for name, lf := range map[string]ledger.ListFilter{
		"NoTenant":       {},
		"BadTenant":      {Tenant: "Acme"},
		"BadTenants":     {Tenants: []string{"acme", "a b"}},
		"EmptyInTenants": {Tenants: []string{"acme", ""}},
		"TooManyTenants": {Tenants: many},
		"EmptyWindow":    {AllTenants: true, CreatedAfter: &now, CreatedBefore: &now},
		"ReversedWindow": {AllTenants: true, CreatedAfter: &later, CreatedBefore: &now},
		"HugeTime":       {AllTenants: true, CreatedBefore: &huge},
		"TargetNUL":      {AllTenants: true, Target: "a\x00"},
	} {
		if _, err := f.store.List(f.ctx, lf); ledger.ErrorCode(err) != ledger.EInvalid {
			t.Errorf("List %s: %v", name, err)
		}
		if _, err := b.CountByState(f.ctx, lf); ledger.ErrorCode(err) != ledger.EInvalid {
			t.Errorf("CountByState %s: %v", name, err)
		}
	}
	for name, sf := range map[string]ledger.SearchFilter{
		"NoTenant":       {Ref: "x"},
		"BadTenants":     {Tenants: []string{"ACME"}, Ref: "x"},
		"TooManyTenants": {Tenants: many, Ref: "x"},
		"EmptyRef":       {AllTenants: true},
		"NUL":            {AllTenants: true, Ref: "a\x00"},
		"InvalidUTF8":    {AllTenants: true, Ref: "a\xff"},
		"TooLong":        {AllTenants: true, Ref: strings.Repeat("x", ledger.MaxIntentRef+1)},
	} {
		if _, err := b.Search(f.ctx, sf); ledger.ErrorCode(err) != ledger.EInvalid {
			t.Errorf("Search %s: %v", name, err)
		}
	}
}
