package ledgertest

import (
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"settle/ledger"
)

// RunAudit runs the conformance tests of ledger.AuditStore against the
// stores h makes, which must implement it.
func RunAudit(t *testing.T, h Harness) {
	t.Run("Batch", func(t *testing.T) { testAuditBatch(t, h) })
	t.Run("Findings", func(t *testing.T) { testFindings(t, h) })
	t.Run("Position", func(t *testing.T) { testAuditPosition(t, h) })
}

func auditSetup(t *testing.T, h Harness) (*fixture, ledger.AuditStore) {
	t.Helper()
	f := setup(t, h)
	as, ok := f.store.(ledger.AuditStore)
	if !ok {
		t.Fatal("store does not implement ledger.AuditStore")
	}
	return f, as
}

// succeededOn drives a new operation of tenant on target to SUCCEEDED.
func (f *fixture) succeededOn(tenant, target string) ledger.Operation {
	f.t.Helper()
	n := f.newOp(tenant)
	n.Target = target
	op, _, err := f.store.Create(f.ctx, n)
	if err != nil {
		f.t.Fatal(err)
	}
	op, err = f.store.Claim(f.ctx, op.Tenant, op.ID, op.PayloadHash, time.Minute)
	if err != nil {
		f.t.Fatal(err)
	}
	return f.record(op, ledger.InFlight, ledger.Succeeded)
}

// failedOn drives a new operation of tenant on target to FAILED_TERMINAL.
func (f *fixture) failedOn(tenant, target string) ledger.Operation {
	f.t.Helper()
	n := f.newOp(tenant)
	n.Target = target
	op, _, err := f.store.Create(f.ctx, n)
	if err != nil {
		f.t.Fatal(err)
	}
	op, err = f.store.Claim(f.ctx, op.Tenant, op.ID, op.PayloadHash, time.Minute)
	if err != nil {
		f.t.Fatal(err)
	}
	return f.record(op, ledger.InFlight, ledger.FailedTerminal)
}

// The walk covers both final states: SUCCEEDED (is there exactly one
// object?) and FAILED_TERMINAL (is there none?), in one order.
func testAuditBatch(t *testing.T, h Harness) {
	f, as := auditSetup(t, h)
	var want []ledger.Operation
	for i := 0; i < 7; i++ {
		tenant := []string{"acme", "globex"}[i%2]
		if i%4 == 1 {
			want = append(want, f.failedOn(tenant, "payments"))
		} else {
			want = append(want, f.succeededOn(tenant, "payments"))
		}
		if i%3 == 0 {
			f.clk.Advance(time.Millisecond) // others share a created_at: the id breaks the tie
		}
	}
	// Not in the walk: other states, another target.
	f.create("acme")
	f.unknown("globex")
	f.inState("acme", ledger.Escalated)
	f.succeededOn("acme", "other")
	f.failedOn("acme", "other")
	sort.Slice(want, func(i, j int) bool {
		if !want[i].CreatedAt.Equal(want[j].CreatedAt) {
			return want[i].CreatedAt.Before(want[j].CreatedAt)
		}
		return want[i].ID < want[j].ID
	})

	for _, n := range []int{3, 7, 500} {
		var got []ledger.Operation
		pos, batches := ledger.Cursor{}, 0
		for {
			ops, next, err := as.AuditBatch(f.ctx, "payments", pos, n)
			if err != nil {
				t.Fatal(err)
			}
			got, batches = append(got, ops...), batches+1
			if next == (ledger.Cursor{}) {
				break
			}
			if batches > 10 {
				t.Fatalf("n=%d: the walk never ends", n)
			}
			pos = next
		}
		if len(got) != len(want) {
			t.Fatalf("n=%d: walked %d operations, want %d", n, len(got), len(want))
		}
		for i := range want {
			if got[i].ID != want[i].ID || got[i].Tenant != want[i].Tenant || got[i].State != want[i].State {
				t.Fatalf("n=%d position %d: %s/%s, want %s/%s (oldest first, then id)",
					n, i, got[i].Tenant, got[i].ID, want[i].Tenant, want[i].ID)
			}
		}
		// 7 in batches of 3 is 3 batches; 7 in one batch of 7 needs a second,
		// empty one to learn that the end was reached.
		if wantBatches := map[int]int{3: 3, 7: 2, 500: 1}[n]; batches != wantBatches {
			t.Fatalf("n=%d: %d batches, want %d", n, batches, wantBatches)
		}
	}

	for name, bad := range map[string]struct {
		target string
		pos    ledger.Cursor
		n      int
	}{
		"NoTarget": {"", ledger.Cursor{}, 10},
		"Zero":     {"payments", ledger.Cursor{}, 0},
		"TooMany":  {"payments", ledger.Cursor{}, ledger.MaxListLimit + 1},
		"Position": {"payments", ledger.Cursor{ID: "not-a-uuid"}, 10},
	} {
		if _, _, err := as.AuditBatch(f.ctx, bad.target, bad.pos, bad.n); ledger.ErrorCode(err) != ledger.EInvalid {
			t.Fatalf("%s: %v, want invalid", name, err)
		}
	}
}

func testFindings(t *testing.T, h Harness) {
	f, as := auditSetup(t, h)
	start := f.clk.Now()
	a := f.succeededOn("acme", "payments")
	b := f.succeededOn("globex", "payments")
	dup := ledger.Finding{Tenant: "acme", OperationID: a.ID, Kind: ledger.FindingDuplicate,
		RemoteIDs: []string{"ch_1", "ch_2"}, Evidence: []byte(`{"results":2}`)}

	record := func(fd ledger.Finding, wantCreated bool) {
		t.Helper()
		created, err := as.RecordFinding(f.ctx, fd)
		if err != nil || created != wantCreated {
			t.Fatalf("record %s of %s: created=%v err=%v, want created=%v", fd.Kind, fd.OperationID, created, err, wantCreated)
		}
	}
	record(dup, true)
	f.clk.Advance(time.Minute)
	record(dup, false) // re-auditing keeps one open finding
	record(ledger.Finding{Tenant: "acme", OperationID: a.ID, Kind: ledger.FindingLoss, Escalated: true}, true)
	record(ledger.Finding{Tenant: "globex", OperationID: b.ID, Kind: ledger.FindingDuplicate, RemoteIDs: []string{"x", "y"}}, true)
	// An object for an operation the ledger calls "Not applied".
	c := f.failedOn("initech", "payments")
	phantom := ledger.Finding{Tenant: "initech", OperationID: c.ID, Kind: ledger.FindingPhantom,
		RemoteIDs: []string{"ch_9"}, Escalated: true}
	record(phantom, true)
	record(phantom, false)
	if fs, err := as.Findings(f.ctx, "initech", start); err != nil || len(fs) != 1 || fs[0].Kind != phantom.Kind ||
		!fs[0].Escalated || !slices.Equal(fs[0].RemoteIDs, phantom.RemoteIDs) || fs[0].Target != "payments" {
		t.Fatalf("phantom findings %+v, %v", fs, err)
	}

	got, err := as.Findings(f.ctx, "acme", start)
	if err != nil || len(got) != 2 {
		t.Fatalf("findings: %d, %v", len(got), err)
	}
	loss, first := got[0], got[1] // newest first
	if first.Kind != ledger.FindingDuplicate || first.Tenant != "acme" || first.OperationID != a.ID ||
		first.Target != "payments" || !slices.Equal(first.RemoteIDs, dup.RemoteIDs) || first.Escalated ||
		strings.ReplaceAll(string(first.Evidence), " ", "") != `{"results":2}` ||
		!first.FoundAt.Equal(start) || first.ResolvedAt != nil || first.ID == 0 {
		t.Fatalf("duplicate finding: %+v", first)
	}
	if loss.Kind != ledger.FindingLoss || !loss.Escalated || len(loss.RemoteIDs) != 0 || string(loss.Evidence) != "{}" ||
		!loss.FoundAt.Equal(start.Add(time.Minute)) {
		t.Fatalf("loss finding: %+v", loss)
	}

	for _, c := range []struct {
		tenant string
		kind   ledger.FindingKind
		since  time.Time
		want   int
	}{
		{"acme", ledger.FindingDuplicate, start, 1},
		{"acme", ledger.FindingLoss, start, 1},
		{"acme", "", start, 2},
		{"acme", "", start.Add(time.Second), 1},
		{"globex", ledger.FindingDuplicate, start, 1},
		{"globex", ledger.FindingLoss, start, 0},
		{"initech", "", start, 1},
		{"initech", ledger.FindingPhantom, start, 1},
		{"initech", ledger.FindingLoss, start, 0},
		{"acme", ledger.FindingPhantom, start, 0},
	} {
		n, err := as.CountFindings(f.ctx, c.tenant, c.kind, ledger.Since(c.since))
		if err != nil || n != c.want {
			t.Fatalf("count %s %q since %s: %d, %v; want %d", c.tenant, c.kind, c.since, n, err, c.want)
		}
	}

	// A finding names an operation of its own tenant, or nothing is stored.
	_, err = as.RecordFinding(f.ctx, ledger.Finding{Tenant: "globex", OperationID: a.ID, Kind: ledger.FindingLoss})
	wantCode(t, err, ledger.ENotFound)
	for name, bad := range map[string]ledger.Finding{
		"Kind":     {Tenant: "acme", OperationID: a.ID, Kind: "missing"},
		"Tenant":   {Tenant: "", OperationID: a.ID, Kind: ledger.FindingLoss},
		"ID":       {Tenant: "acme", OperationID: "nope", Kind: ledger.FindingLoss},
		"Evidence": {Tenant: "acme", OperationID: a.ID, Kind: ledger.FindingLoss, Evidence: []byte(`[1]`)},
	} {
		if _, err := as.RecordFinding(f.ctx, bad); ledger.ErrorCode(err) != ledger.EInvalid {
			t.Fatalf("%s: %v, want invalid", name, err)
		}
	}
	if n, _ := as.CountFindings(f.ctx, "acme", "", ledger.Window{Since: start, Until: start.Add(time.Second)}); n != 1 {
		t.Fatalf("acme has %d findings in its first second, want 1 (the end is exclusive)", n)
	}
	if n, _ := as.CountFindings(f.ctx, "globex", "", ledger.Since(start)); n != 1 {
		t.Fatalf("globex has %d findings after rejected ones, want 1", n)
	}
}

func testAuditPosition(t *testing.T, h Harness) {
	f, as := auditSetup(t, h)
	_, err := as.AuditPosition(f.ctx, "payments")
	wantCode(t, err, ledger.ENotFound)

	op := f.succeededOn("acme", "payments")
	pos := ledger.Cursor{CreatedAt: op.CreatedAt, ID: op.ID}
	for _, p := range []ledger.Cursor{pos, {}, pos} { // save, wrap around, save again
		if err := as.SaveAuditPosition(f.ctx, "payments", p); err != nil {
			t.Fatal(err)
		}
		got, err := as.AuditPosition(f.ctx, "payments")
		if err != nil || got.ID != p.ID || !got.CreatedAt.Equal(p.CreatedAt) {
			t.Fatalf("position %+v, %v; want %+v", got, err, p)
		}
	}
	if _, err := as.AuditPosition(f.ctx, "other"); ledger.ErrorCode(err) != ledger.ENotFound {
		t.Fatalf("another target's position: %v", err)
	}
	// The saved position continues the walk after that operation.
	f.clk.Advance(time.Millisecond)
	next := f.succeededOn("globex", "payments")
	ops, _, err := as.AuditBatch(f.ctx, "payments", pos, 10)
	if err != nil || len(ops) != 1 || ops[0].ID != next.ID {
		t.Fatalf("batch after the saved position: %d operations, %v", len(ops), err)
	}
}
