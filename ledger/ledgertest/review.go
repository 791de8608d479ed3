package ledgertest

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"settle/ledger"
)

// RunReview runs the conformance tests of ledger.ReviewStore against the
// stores h makes, which must implement it.
func RunReview(t *testing.T, h Harness) {
	t.Run("Link", func(t *testing.T) { testLink(t, h) })
	t.Run("LinkRefused", func(t *testing.T) { testLinkRefused(t, h) })
	t.Run("Acknowledge", func(t *testing.T) { testAcknowledge(t, h) })
	t.Run("ListFindings", func(t *testing.T) { testListFindings(t, h) })
	t.Run("ListQuarantinePages", func(t *testing.T) { testListQuarantinePages(t, h) })
}

func reviewSetup(t *testing.T, h Harness) (*fixture, ledger.ReviewStore, ledger.InboxStore) {
	t.Helper()
	f := setup(t, h)
	rs, ok := f.store.(ledger.ReviewStore)
	if !ok {
		t.Fatal("store does not implement ledger.ReviewStore")
	}
	return f, rs, inboxOf(t, f)
}

// quarantined records an item claiming tenant, about no known operation.
func (f *fixture) quarantined(in ledger.InboxStore, tenant string) int64 {
	f.t.Helper()
	f.seq++
	id, err := in.Quarantine(f.ctx, ledger.QuarantineItem{Target: "payments", Reason: "unknown reference",
		EventID: "evt-" + strconv.Itoa(f.seq), Reference: "ref-" + strconv.Itoa(f.seq), Tenant: tenant,
		RemoteID: "ch_" + strconv.Itoa(f.seq)})
	if err != nil {
		f.t.Fatal(err)
	}
	return id
}

// item returns the quarantined item id, fetched with every tenant's.
func item(t *testing.T, f *fixture, rs ledger.ReviewStore, id int64) ledger.QuarantineItem {
	t.Helper()
	items, err := rs.ListQuarantine(f.ctx, ledger.QuarantineFilter{AllTenants: true, Unattributed: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range items {
		if q.ID == id {
			return q
		}
	}
	t.Fatalf("quarantine item %d not listed", id)
	return ledger.QuarantineItem{}
}

// Linking attributes the event to the tenant's operation: the item is
// closed and scoped to that operation, the action names the operation and
// its author, and an UNKNOWN operation becomes due for the reconciler —
// its state untouched.
func testLink(t *testing.T, h Harness) {
	f, rs, in := reviewSetup(t, h)
	// An UNKNOWN operation whose next check is an hour away, as after a
	// reconciler's "not found yet".
	leased := f.lease(f.unknown("acme"))
	later := f.clk.Now().Add(time.Hour)
	o := outcome(leased, ledger.Unknown, ledger.Unknown)
	o.NextAt, o.Actor = &later, ledger.ActorReconciler
	op, err := f.store.Record(f.ctx, o)
	if err != nil || op.NextReconcileAt == nil || !op.NextReconcileAt.After(f.clk.Now()) {
		t.Fatalf("fixture: next check %v, %v; want in the future", op.NextReconcileAt, err)
	}

	id := f.quarantined(in, "acme")
	f.clk.Advance(time.Second)
	ctx := f.as("oidc:olu", "Olu Owner", "owner")
	if err := rs.LinkQuarantine(ctx, "acme", id, op.ID, "event carries our reference in metadata"); err != nil {
		t.Fatal(err)
	}
	q := item(t, f, rs, id)
	if q.OperationID != op.ID || q.OpTenant != "acme" || q.ScopeTenant() != "acme" || q.ResolvedAt == nil ||
		q.ResolvedBy != "oidc:olu" || q.ResolvedByName != "Olu Owner" || q.Resolution != "event carries our reference in metadata" ||
		q.ResolvedAs != ledger.QuarantineLinked || q.ResolvedByRole != "owner" {
		t.Fatalf("linked item %+v", q)
	}
	got := f.get(op)
	if got.State != ledger.Unknown || got.Fence != op.Fence || got.NextReconcileAt == nil ||
		got.NextReconcileAt.After(f.clk.Now()) {
		t.Fatalf("operation after link: state %s fence %d (was %d) next %v, want UNKNOWN, unchanged fence, due now (%v)",
			got.State, got.Fence, op.Fence, got.NextReconcileAt, f.clk.Now())
	}
	acts, err := rs.Actions(f.ctx, ledger.ActionFilter{Tenant: "acme", OperationID: op.ID})
	if err != nil || len(acts) != 1 {
		t.Fatalf("actions on the operation: %+v %v", acts, err)
	}
	a := acts[0]
	if a.Kind != ledger.ActionQuarantineLink || a.Object != strconv.FormatInt(id, 10) || a.Subject != "oidc:olu" ||
		a.Role != "owner" || a.RequestID != "req-oidc:olu" || a.Reason != "event carries our reference in metadata" {
		t.Fatalf("link action %+v", a)
	}
	if got, err := rs.QuarantineItem(f.ctx, "acme", id); err != nil || got.ID != id || got.OperationID != op.ID || got.ResolvedAt == nil ||
		got.ResolvedAs != ledger.QuarantineLinked || got.ResolvedByRole != "owner" {
		t.Fatalf("quarantine item %+v %v", got, err)
	}
	_, err = rs.QuarantineItem(f.ctx, "globex", id)
	wantCode(t, err, ledger.ENotFound)
	_, err = rs.QuarantineItem(f.ctx, "", id)
	wantCode(t, err, ledger.ENotFound)
	// Linked once: the item is closed.
	wantCode(t, rs.LinkQuarantine(ctx, "acme", id, op.ID, "again"), ledger.ENotFound)

	// A final operation is linked as evidence only: nothing about it moves.
	done := f.succeededOn("acme", "payments")
	id2 := f.quarantined(in, "acme")
	if err := rs.LinkQuarantine(ctx, "acme", id2, done.ID, "late event for a confirmed charge"); err != nil {
		t.Fatal(err)
	}
	sameOp(t, done, f.get(done))
}

// The link stays inside the tenant: another tenant's operation is not
// found (and the item stays open), an unattributed item cannot be given a
// tenant, and a person must act with a reason.
func testLinkRefused(t *testing.T, h Harness) {
	f, rs, in := reviewSetup(t, h)
	mine := f.create("acme")
	theirs := f.create("globex")
	id := f.quarantined(in, "acme")
	wantCode(t, rs.LinkQuarantine(f.ctx, "acme", id, theirs.ID, "looks like theirs"), ledger.ENotFound)
	wantCode(t, rs.LinkQuarantine(f.ctx, "globex", id, theirs.ID, "looks like theirs"), ledger.ENotFound)
	wantCode(t, rs.LinkQuarantine(f.ctx, "acme", id, "00000000-0000-4000-8000-000000000000", "no such"), ledger.ENotFound)
	wantCode(t, rs.LinkQuarantine(f.ctx, "acme", id, "not-a-uuid", "bad id"), ledger.EInvalid)
	wantCode(t, rs.LinkQuarantine(f.ctx, "acme", id, mine.ID, ""), ledger.EInvalid)
	wantCode(t, rs.LinkQuarantine(t.Context(), "acme", id, mine.ID, "no actor"), ledger.EInvalid)
	if q := item(t, f, rs, id); q.ResolvedAt != nil || q.OperationID != "" {
		t.Fatalf("a refused link changed the item: %+v", q)
	}
	orphan := f.quarantined(in, "")
	wantCode(t, rs.LinkQuarantine(f.ctx, "", orphan, mine.ID, "guess"), ledger.EInvalid)
	wantCode(t, rs.LinkQuarantine(f.ctx, "acme", orphan, mine.ID, "guess"), ledger.ENotFound)
	for _, tenant := range []string{"acme", "globex"} {
		if acts, err := rs.Actions(f.ctx, ledger.ActionFilter{Tenant: tenant}); err != nil || len(acts) != 0 {
			t.Fatalf("%s: refused links left actions %+v %v", tenant, acts, err)
		}
	}
	if err := rs.LinkQuarantine(f.ctx, "acme", id, mine.ID, "ours after all"); err != nil {
		t.Fatal(err)
	}
}

// A finding is acknowledged once, by the context's actor, with a note;
// re-auditing the same discrepancy keeps the one, acknowledged, finding.
func testAcknowledge(t *testing.T, h Harness) {
	f, rs, _ := reviewSetup(t, h)
	as := f.store.(ledger.AuditStore)
	op := f.succeededOn("acme", "payments")
	other := f.succeededOn("globex", "payments")
	dup := ledger.Finding{Tenant: "acme", OperationID: op.ID, Kind: ledger.FindingDuplicate, RemoteIDs: []string{"ch_1", "ch_2"}}
	for _, fd := range []ledger.Finding{dup, {Tenant: "globex", OperationID: other.ID, Kind: ledger.FindingLoss}} {
		if _, err := as.RecordFinding(f.ctx, fd); err != nil {
			t.Fatal(err)
		}
	}
	fs, err := rs.ListFindings(f.ctx, ledger.FindingFilter{Tenants: []string{"acme"}})
	if err != nil || len(fs) != 1 || !fs[0].Open() || fs[0].Acknowledged != nil {
		t.Fatalf("acme's findings: %+v %v", fs, err)
	}
	id := fs[0].ID
	theirs, err := rs.ListFindings(f.ctx, ledger.FindingFilter{Tenants: []string{"globex"}})
	if err != nil || len(theirs) != 1 {
		t.Fatalf("globex's findings: %+v %v", theirs, err)
	}

	wantCode(t, rs.AcknowledgeFinding(f.ctx, "acme", id, ""), ledger.EInvalid)
	wantCode(t, rs.AcknowledgeFinding(t.Context(), "acme", id, "no actor"), ledger.EInvalid)
	wantCode(t, rs.AcknowledgeFinding(f.ctx, "acme", theirs[0].ID, "not ours"), ledger.ENotFound)
	wantCode(t, rs.AcknowledgeFinding(f.ctx, "globex", id, "not theirs"), ledger.ENotFound)

	f.clk.Advance(time.Minute)
	at := f.clk.Now()
	ctx := f.as("oidc:olu", "Olu Owner", "owner")
	if err := rs.AcknowledgeFinding(ctx, "acme", id, "refunding ch_2 by hand"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, rs.AcknowledgeFinding(ctx, "acme", id, "twice"), ledger.ENotFound)

	fs, err = rs.ListFindings(f.ctx, ledger.FindingFilter{Tenants: []string{"acme"}})
	if err != nil || len(fs) != 1 {
		t.Fatalf("after acknowledging: %+v %v", fs, err)
	}
	ack := fs[0].Acknowledged
	if fs[0].Open() || ack == nil || !ack.At.Equal(at) || ack.Subject != "oidc:olu" || ack.Name != "Olu Owner" ||
		ack.Note != "refunding ch_2 by hand" {
		t.Fatalf("acknowledgement %+v", ack)
	}
	if one, err := rs.Finding(f.ctx, "acme", id); err != nil || one.ID != id || one.Acknowledged == nil ||
		one.Acknowledged.Note != "refunding ch_2 by hand" || one.Target != "payments" {
		t.Fatalf("finding %+v %v", one, err)
	}
	_, err = rs.Finding(f.ctx, "globex", id)
	wantCode(t, err, ledger.ENotFound)
	if created, err := as.RecordFinding(f.ctx, dup); err != nil || created {
		t.Fatalf("re-audit after acknowledging: created=%v %v, want the one finding kept", created, err)
	}
	acts, err := rs.Actions(f.ctx, ledger.ActionFilter{Tenant: "acme", OperationID: op.ID})
	if err != nil || len(acts) != 1 || acts[0].Kind != ledger.ActionFindingAcknowledge ||
		acts[0].Object != strconv.FormatInt(id, 10) || acts[0].Reason != "refunding ch_2 by hand" || acts[0].Subject != "oidc:olu" {
		t.Fatalf("acknowledge action %+v %v", acts, err)
	}
}

// ListFindings keeps to the tenants asked for, and selects the open ones
// and one operation's.
func testListFindings(t *testing.T, h Harness) {
	f, rs, _ := reviewSetup(t, h)
	as := f.store.(ledger.AuditStore)
	a, b := f.succeededOn("acme", "payments"), f.succeededOn("acme", "payments")
	g := f.failedOn("globex", "payments")
	for _, fd := range []ledger.Finding{
		{Tenant: "acme", OperationID: a.ID, Kind: ledger.FindingDuplicate, RemoteIDs: []string{"ch_first", "ch_Second"}},
		{Tenant: "acme", OperationID: b.ID, Kind: ledger.FindingLoss},
		{Tenant: "globex", OperationID: g.ID, Kind: ledger.FindingPhantom, RemoteIDs: []string{"ch_first"}},
	} {
		if _, err := as.RecordFinding(f.ctx, fd); err != nil {
			t.Fatal(err)
		}
	}
	count := func(ff ledger.FindingFilter) int {
		t.Helper()
		fs, err := rs.ListFindings(f.ctx, ff)
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i < len(fs); i++ {
			if fs[i].ID > fs[i-1].ID {
				t.Fatalf("not newest first: %+v", fs)
			}
		}
		return len(fs)
	}
	byOp := ledger.FindingFilter{Tenants: []string{"acme"}, OperationID: a.ID}
	for name, c := range map[string]struct {
		f    ledger.FindingFilter
		want int
	}{
		"All":          {ledger.FindingFilter{AllTenants: true}, 3},
		"Tenant":       {ledger.FindingFilter{Tenants: []string{"acme"}}, 2},
		"NoTenant":     {ledger.FindingFilter{}, 0},
		"Operation":    {byOp, 1},
		"OtherTenants": {ledger.FindingFilter{Tenants: []string{"globex"}, OperationID: a.ID}, 0},
	} {
		if got := count(c.f); got != c.want {
			t.Errorf("%s: %d findings, want %d", name, got, c.want)
		}
	}
	fs, _ := rs.ListFindings(f.ctx, byOp)
	if err := rs.AcknowledgeFinding(f.ctx, "acme", fs[0].ID, "seen"); err != nil {
		t.Fatal(err)
	}
	if got := count(ledger.FindingFilter{Tenants: []string{"acme"}, Open: true}); got != 1 {
		t.Errorf("open: %d, want 1", got)
	}
	if got := count(ledger.FindingFilter{Tenants: []string{"acme"}, OperationID: a.ID, Open: true}); got != 0 {
		t.Errorf("open of the acknowledged operation: %d, want 0", got)
	}
	_, err := rs.ListFindings(f.ctx, ledger.FindingFilter{AllTenants: true, OperationID: a.ID})
	wantCode(t, err, ledger.EInvalid)

	// Pages by keyset, searches and filters in the store.
	all := ledger.FindingFilter{AllTenants: true}
	page := func(ff ledger.FindingFilter) []int64 {
		t.Helper()
		fs, err := rs.ListFindings(f.ctx, ff)
		if err != nil {
			t.Fatal(err)
		}
		ids := []int64{}
		for _, fd := range fs {
			ids = append(ids, fd.ID)
		}
		return ids
	}
	every := page(all)
	first := all
	first.Limit = 2
	next := all
	next.After = every[1]
	for name, c := range map[string]struct {
		f    ledger.FindingFilter
		want []int64
	}{
		"FirstPage":         {first, every[:2]},
		"NextPage":          {next, every[2:]},
		"Resolved":          {ledger.FindingFilter{AllTenants: true, Resolved: true}, every[2:]},
		"Kind":              {ledger.FindingFilter{AllTenants: true, Kind: ledger.FindingPhantom}, every[:1]},
		"Target":            {ledger.FindingFilter{AllTenants: true, Target: "other"}, []int64{}},
		"ObjectID":          {ledger.FindingFilter{AllTenants: true, Ref: " ch_Second "}, every[2:]},
		"ObjectIDOtherCase": {ledger.FindingFilter{AllTenants: true, Ref: "ch_second"}, []int64{}},
		// Two tenants' findings name ch_first: each sees only its own.
		"ObjectIDTwoTenants": {ledger.FindingFilter{AllTenants: true, Ref: "ch_first"}, []int64{every[0], every[2]}},
		"ObjectIDOwnTenant":  {ledger.FindingFilter{Tenants: []string{"acme"}, Ref: "ch_first"}, every[2:]},
		"ObjectIDTheirs":     {ledger.FindingFilter{Tenants: []string{"globex"}, Ref: "ch_Second"}, []int64{}},
		// Any object id settle has seen for the operation finds its
		// findings: b's confirmed reference, which its loss finding lacks.
		"ConfirmedObject":       {ledger.FindingFilter{Tenants: []string{"acme"}, Ref: b.RemoteRef}, every[1:2]},
		"OperationPrefixTheirs": {ledger.FindingFilter{Tenants: []string{"acme"}, Ref: g.ID[:10]}, []int64{}},
		"SearchNextPage":        {ledger.FindingFilter{AllTenants: true, Ref: "ch_first", After: every[0]}, every[2:]},
		"SearchOpen":            {ledger.FindingFilter{AllTenants: true, Ref: "ch_first", Open: true}, every[:1]},
		"OperationID":           {ledger.FindingFilter{AllTenants: true, Ref: strings.ToUpper(b.ID)}, every[1:2]},
		"OperationPrefix":       {ledger.FindingFilter{AllTenants: true, Ref: g.ID[:10]}, every[:1]},
		"Age":                   {ledger.FindingFilter{AllTenants: true, Before: new(f.clk.Now())}, []int64{}},
	} {
		if got := page(c.f); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", name, got, c.want)
		}
	}
}
