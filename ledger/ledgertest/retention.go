package ledgertest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"settle/ledger"
)

// RunRetention checks the retention rules (ledger.RetentionStore) and a
// tenant's erasure (ledger.TenantEraser).
func RunRetention(t *testing.T, h Harness) {
	t.Run("Redact", func(t *testing.T) { testRetentionRedact(t, h) })
	t.Run("DeleteOperations", func(t *testing.T) { testRetentionDelete(t, h) })
	t.Run("PurgeReviewed", func(t *testing.T) { testRetentionPurge(t, h) })
	t.Run("Apply", func(t *testing.T) { testRetentionApply(t, h) })
	t.Run("ConcurrentPasses", func(t *testing.T) { testRetentionConcurrent(t, h) })
	t.Run("EraseTenant", func(t *testing.T) { testEraseTenant(t, h) })
}

func retentionOf(t *testing.T, f *fixture) ledger.RetentionStore {
	t.Helper()
	rs, ok := f.store.(ledger.RetentionStore)
	if !ok {
		t.Fatal("store does not implement ledger.RetentionStore")
	}
	return rs
}

// finalOp creates n and drives it to the final state to.
func (f *fixture) finalOp(n ledger.NewOperation, to ledger.State) ledger.Operation {
	f.t.Helper()
	op, created, err := f.store.Create(f.ctx, n)
	if err != nil || !created {
		f.t.Fatalf("create: %v %v", created, err)
	}
	op, err = f.store.Claim(f.ctx, op.Tenant, op.ID, op.PayloadHash, time.Minute)
	if err != nil {
		f.t.Fatal(err)
	}
	return f.record(op, ledger.InFlight, to)
}

func testRetentionRedact(t *testing.T, h Harness) {
	f := setup(t, h)
	rs := retentionOf(t, f)
	nSucc, nFail := f.newOp("acme"), f.newOp("acme")
	succ := f.finalOp(nSucc, ledger.Succeeded)
	failed := f.finalOp(nFail, ledger.FailedTerminal)
	pending := f.unknown("acme")
	f.clk.Advance(2 * time.Hour)
	recent := f.inState("globex", ledger.Succeeded)
	cut := ledger.RetentionCutoffs{Redact: f.clk.Now().Add(-time.Hour)}

	if c, err := rs.CountRetention(f.ctx, cut); err != nil || c.PayloadsRedacted != 2 || c.Total() != 2 {
		t.Fatalf("dry run: %+v %v, want 2 payloads", c, err)
	}
	if n, err := rs.RedactPayloads(f.ctx, cut.Redact, 1); err != nil || n != 1 {
		t.Fatalf("first batch: %d %v, want 1 (the limit)", n, err)
	}
	if n, err := rs.RedactPayloads(f.ctx, cut.Redact, 10); err != nil || n != 1 {
		t.Fatalf("second batch: %d %v, want 1", n, err)
	}
	if n, err := rs.RedactPayloads(f.ctx, cut.Redact, 10); err != nil || n != 0 {
		t.Fatalf("a redacted payload was redacted again: %d %v", n, err)
	}
	if c, _ := rs.CountRetention(f.ctx, cut); c.Total() != 0 {
		t.Fatalf("dry run after the pass: %+v", c)
	}
	for _, op := range []ledger.Operation{succ, failed} {
		got := f.get(op)
		if !got.Redacted() || len(got.Payload) != 0 || string(got.PayloadHash) != string(op.PayloadHash) ||
			got.State != op.State || !got.UpdatedAt.Equal(op.UpdatedAt) {
			t.Fatalf("after redaction: %+v (want the payload gone, the hash, state and updated_at kept)", got)
		}
	}
	for _, op := range []ledger.Operation{pending, recent} {
		if got := f.get(op); got.Redacted() || string(got.Payload) != string(op.Payload) {
			t.Fatalf("%s operation's payload changed: %q", got.State, got.Payload)
		}
	}
	// The hash alone still answers a repeated creation of the intent.
	again, created, err := f.store.Create(f.ctx, nSucc)
	if err != nil || created || again.ID != succ.ID {
		t.Fatalf("same intent, same payload after redaction: %v %v %v, want the existing operation", again.ID, created, err)
	}
	other := nSucc
	other.Payload = []byte(`{"amount": 999999, "currency": "EUR"}`)
	_, _, err = f.store.Create(f.ctx, other)
	wantCode(t, err, ledger.EPayloadConflict)
	if _, err := rs.RedactPayloads(f.ctx, cut.Redact, 0); ledger.ErrorCode(err) != ledger.EInvalid {
		t.Fatalf("limit 0: %v", err)
	}
}

func testRetentionDelete(t *testing.T, h Harness) {
	f := setup(t, h)
	rs := retentionOf(t, f)
	as := f.store.(ledger.AuditStore)
	rv := f.store.(ledger.ReviewStore)
	cs := f.store.(ledger.CallbackStore)
	if err := cs.SetCallback(f.ctx, "acme", "https://hooks.example.com/settle", cbSecret, f.clk.Now()); err != nil {
		t.Fatal(err)
	}
	nOld := f.newOp("acme")
	old := f.finalOp(nOld, ledger.Succeeded) // acme's final operations each queue a callback notification
	oldFailed := f.inState("acme", ledger.FailedTerminal)
	waiting := f.inState("acme", ledger.Succeeded) // a finding nobody has read
	read := f.inState("acme", ledger.Succeeded)    // a finding acknowledged
	pending := f.unknown("acme")
	otherTenant := f.inState("globex", ledger.Succeeded)
	for _, op := range []ledger.Operation{waiting, read} {
		if _, err := as.RecordFinding(f.ctx, ledger.Finding{Tenant: "acme", OperationID: op.ID, Kind: ledger.FindingDuplicate,
			RemoteIDs: []string{"ch_1", "ch_2"}}); err != nil {
			t.Fatal(err)
		}
	}
	fds, err := as.Findings(f.ctx, "acme", time.Time{})
	if err != nil || len(fds) != 2 {
		t.Fatalf("findings: %+v %v", fds, err)
	}
	for _, fd := range fds {
		if fd.OperationID == read.ID {
			if err := rv.AcknowledgeFinding(f.ctx, "acme", fd.ID, "checked with the provider"); err != nil {
				t.Fatal(err)
			}
		}
	}
	conflicting := nOld
	conflicting.Payload = []byte(`{"amount": 1}`)
	if _, _, err := f.store.Create(f.ctx, conflicting); ledger.ErrorCode(err) != ledger.EPayloadConflict {
		t.Fatalf("conflict: %v", err)
	}
	wantEvents := 0
	for _, op := range []ledger.Operation{old, oldFailed, read, otherTenant} {
		evs, err := f.store.Events(f.ctx, op.Tenant, op.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantEvents += len(evs)
	}
	f.clk.Advance(2 * time.Hour)
	recent := f.inState("acme", ledger.Succeeded)
	cut := ledger.RetentionCutoffs{Delete: f.clk.Now().Add(-time.Hour), Redact: f.clk.Now().Add(-time.Hour)}

	dry, err := rs.CountRetention(f.ctx, cut)
	want := ledger.RetentionCounts{Operations: 4, Events: wantEvents, Notifications: 3, Findings: 1, Conflicts: 1,
		PayloadsRedacted: 1} // waiting's payload is redacted, not deleted
	if err != nil || dry != want {
		t.Fatalf("dry run: %+v %v\nwant %+v", dry, err, want)
	}
	var done ledger.RetentionCounts
	for _, limit := range []int{3, 3} {
		n, err := rs.DeleteOperations(f.ctx, cut.Delete, limit)
		if err != nil {
			t.Fatal(err)
		}
		done.Add(n)
	}
	if want.PayloadsRedacted = 0; done != want {
		t.Fatalf("deleted %+v, want %+v", done, want)
	}
	if n, err := rs.DeleteOperations(f.ctx, cut.Delete, 3); err != nil || n.Total() != 0 {
		t.Fatalf("a third pass deleted %+v %v", n, err)
	}
	for _, op := range []ledger.Operation{old, oldFailed, read, otherTenant} {
		_, err := f.store.Get(f.ctx, op.Tenant, op.ID)
		wantCode(t, err, ledger.ENotFound)
		if evs, _ := f.store.Events(f.ctx, op.Tenant, op.ID); len(evs) != 0 {
			t.Fatalf("events of a deleted operation remain: %d", len(evs))
		}
	}
	if ns, _ := cs.Notifications(f.ctx, "acme", old.ID); len(ns) != 0 {
		t.Fatalf("notifications of a deleted operation remain: %+v", ns)
	}
	for _, op := range []ledger.Operation{waiting, pending, recent} {
		if got := f.get(op); got.State != op.State {
			t.Fatalf("kept operation changed: %+v", got)
		}
	}
	if fds, _ := as.Findings(f.ctx, "acme", time.Time{}); len(fds) != 1 || fds[0].OperationID != waiting.ID {
		t.Fatalf("findings after deletion: %+v, want only the unread one", fds)
	}
	// The intent is forgotten with its operation: a new registration of it
	// is a new operation. This is why DeleteOperationsAfter must outlast
	// every client's retries (docs/data-inventory.md).
	if _, created, err := f.store.Create(f.ctx, nOld); err != nil || !created {
		t.Fatalf("recreating a deleted intent: %v %v", created, err)
	}
	// The event log is still append-only for everyone else.
	if ev, err := f.store.Events(f.ctx, "acme", waiting.ID); err != nil || len(ev) == 0 {
		t.Fatalf("events of a kept operation: %d %v", len(ev), err)
	}
}

func testRetentionPurge(t *testing.T, h Harness) {
	f := setup(t, h)
	rs := retentionOf(t, f)
	in := inboxOf(t, f)
	receive := func(body string, finish bool) int64 {
		t.Helper()
		id, _, err := in.Receive(f.ctx, "payments", []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		if finish {
			if err := in.FinishDelivery(f.ctx, id, "quarantined"); err != nil {
				t.Fatal(err)
			}
		}
		return id
	}
	d1 := receive(`{"id":"evt_1"}`, true)
	d2 := receive(`{"id":"evt_2"}`, true)
	receive(`{"id":"evt_3"}`, false) // not yet processed: never purged
	q1, err := in.Quarantine(f.ctx, ledger.QuarantineItem{Target: "payments", DeliveryID: d1, Reason: "r", Tenant: "acme", At: f.clk.Now()})
	if err != nil {
		t.Fatal(err)
	}
	q2, err := in.Quarantine(f.ctx, ledger.QuarantineItem{Target: "payments", DeliveryID: d2, Reason: "r", Tenant: "acme", At: f.clk.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if err := in.ResolveQuarantine(f.ctx, "acme", q1, "not ours"); err != nil {
		t.Fatal(err)
	}
	f.clk.Advance(2 * time.Hour)
	cut := ledger.RetentionCutoffs{Purge: f.clk.Now().Add(-time.Hour)}
	want := ledger.RetentionCounts{Quarantine: 1, Deliveries: 1} // q2 is open, and names d2
	if c, err := rs.CountRetention(f.ctx, cut); err != nil || c != want {
		t.Fatalf("dry run: %+v %v, want %+v", c, err, want)
	}
	if c, err := rs.PurgeReviewed(f.ctx, cut.Purge, 10); err != nil || c != want {
		t.Fatalf("purge: %+v %v, want %+v", c, err, want)
	}
	items, err := in.ListQuarantine(f.ctx, ledger.QuarantineFilter{AllTenants: true, Unattributed: true})
	if err != nil || len(items) != 1 || items[0].ID != q2 {
		t.Fatalf("quarantine after the purge: %+v %v", items, err)
	}
	// A purged delivery's hash is gone: a redelivery is stored again.
	if _, dup, _ := in.Receive(f.ctx, "payments", []byte(`{"id":"evt_1"}`)); dup {
		t.Fatal("a purged delivery still counts as received")
	}
	if _, dup, _ := in.Receive(f.ctx, "payments", []byte(`{"id":"evt_2"}`)); !dup {
		t.Fatal("the delivery an open item names was purged")
	}
	if err := in.ResolveQuarantine(f.ctx, "acme", q2, "reviewed"); err != nil {
		t.Fatal(err)
	}
	f.clk.Advance(2 * time.Hour)
	if c, err := rs.PurgeReviewed(f.ctx, f.clk.Now().Add(-time.Hour), 10); err != nil || c.Quarantine != 1 || c.Deliveries != 1 {
		t.Fatalf("second purge: %+v %v, want q2 and d2", c, err)
	}
}

func testRetentionApply(t *testing.T, h Harness) {
	f := setup(t, h)
	rs := retentionOf(t, f)
	for range 5 {
		f.inState("acme", ledger.Succeeded)
	}
	f.clk.Advance(48 * time.Hour)
	for range 3 {
		f.inState("acme", ledger.FailedTerminal)
	}
	f.clk.Advance(2 * time.Hour)
	p := ledger.RetentionPolicy{Owner: "payments-team", RedactPayloadsAfter: time.Hour, DeleteOperationsAfter: 24 * time.Hour}
	cut := p.Cutoffs(f.clk.Now())
	dry, err := rs.CountRetention(f.ctx, cut)
	if err != nil || dry.Operations != 5 || dry.PayloadsRedacted != 3 {
		t.Fatalf("dry run: %+v %v", dry, err)
	}
	done, err := ledger.ApplyRetention(f.ctx, rs, cut, 2) // batches of 2: 3 deletes, 2 redactions
	if err != nil || done != dry {
		t.Fatalf("applied %+v %v, want the dry run's %+v", done, err, dry)
	}
	if again, _ := ledger.ApplyRetention(f.ctx, rs, cut, 2); again.Total() != 0 {
		t.Fatalf("a second pass did %+v", again)
	}
}

// Two replicas' passes at once (separate pools where the store has them)
// remove each row once between them, without an error.
func testRetentionConcurrent(t *testing.T, h Harness) {
	f := setup(t, h)
	in := inboxOf(t, f)
	for i := range 40 {
		if i%2 == 0 {
			f.inState("acme", ledger.Succeeded)
		} else {
			f.inState("globex", ledger.FailedTerminal)
		}
		id, _, err := in.Receive(f.ctx, "payments", []byte(fmt.Sprintf(`{"id":"evt_%d"}`, i)))
		if err != nil {
			t.Fatal(err)
		}
		if err := in.FinishDelivery(f.ctx, id, "matched"); err != nil {
			t.Fatal(err)
		}
	}
	f.clk.Advance(48 * time.Hour)
	for range 30 {
		f.inState("acme", ledger.Succeeded) // redacted, not deleted
	}
	f.clk.Advance(2 * time.Hour)
	stores := []ledger.Store{f.store, f.store}
	if h.Sibling != nil {
		stores[1] = h.Sibling(t, f.store, f.clk.Now)
	}
	cut := ledger.RetentionPolicy{RedactPayloadsAfter: time.Hour, DeleteOperationsAfter: 24 * time.Hour,
		PurgeReviewedAfter: 24 * time.Hour}.Cutoffs(f.clk.Now())
	want, err := retentionOf(t, f).CountRetention(f.ctx, cut)
	if err != nil || want.Operations != 40 || want.PayloadsRedacted != 30 || want.Deliveries != 40 {
		t.Fatalf("dry run: %+v %v", want, err)
	}
	results := make(chan ledger.RetentionCounts, len(stores))
	errs := make(chan error, len(stores))
	for _, s := range stores {
		go func() {
			c, err := ledger.ApplyRetention(f.ctx, s.(ledger.RetentionStore), cut, 3)
			results <- c
			errs <- err
		}()
	}
	var got ledger.RetentionCounts
	for range stores {
		got.Add(<-results)
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	// A pass that met rows the other held may stop early; a third pass
	// finishes, and together they removed each row exactly once.
	rest, err := ledger.ApplyRetention(f.ctx, retentionOf(t, f), cut, 3)
	if err != nil {
		t.Fatal(err)
	}
	got.Add(rest)
	if got != want {
		t.Fatalf("the passes removed %+v, want %+v", got, want)
	}
	if left, _ := retentionOf(t, f).CountRetention(f.ctx, cut); left.Total() != 0 {
		t.Fatalf("left behind: %+v", left)
	}
}

func testEraseTenant(t *testing.T, h Harness) {
	f := setup(t, h)
	er, ok := f.store.(ledger.TenantEraser)
	if !ok {
		t.Fatal("store does not implement ledger.TenantEraser")
	}
	ts := f.store.(ledger.TokenStore)
	cs := f.store.(ledger.CallbackStore)
	ps := f.store.(ledger.TenantParamStore)
	as := f.store.(ledger.AuditStore)
	in := inboxOf(t, f)
	acts := f.store.(ledger.ActionStore)

	type tenantData struct {
		ops   []ledger.Operation
		token ledger.Token
	}
	populate := func(tenant string) tenantData {
		t.Helper()
		var d tenantData
		if err := cs.SetCallback(f.ctx, tenant, "https://hooks.example.com/"+tenant, cbSecret, f.clk.Now()); err != nil {
			t.Fatal(err)
		}
		f.knownTenant(tenant)
		_, tok, _ := ledger.NewToken(tenant, "billing", f.clk.Now())
		if err := ts.CreateToken(f.ctx, tok); err != nil {
			t.Fatal(err)
		}
		d.token = tok
		if err := ps.SetTenantParams(f.ctx, tenant, map[string]string{"account": "acct_" + tenant}, nil, false); err != nil {
			t.Fatal(err)
		}
		for _, s := range []ledger.State{ledger.Succeeded, ledger.FailedTerminal, ledger.Escalated} {
			d.ops = append(d.ops, f.inState(tenant, s))
		}
		if _, err := as.RecordFinding(f.ctx, ledger.Finding{Tenant: tenant, OperationID: d.ops[0].ID,
			Kind: ledger.FindingDuplicate, RemoteIDs: []string{"a", "b"}}); err != nil {
			t.Fatal(err)
		}
		dl, _, err := in.Receive(f.ctx, "payments", []byte(`{"tenant":"`+tenant+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		if err := in.FinishDelivery(f.ctx, dl, "quarantined"); err != nil {
			t.Fatal(err)
		}
		if _, err := in.Quarantine(f.ctx, ledger.QuarantineItem{Target: "payments", DeliveryID: dl, Reason: "r",
			Tenant: tenant, OperationID: d.ops[0].ID, OpTenant: tenant, At: f.clk.Now()}); err != nil {
			t.Fatal(err)
		}
		return d
	}
	acme, globex := populate("acme"), populate("globex")
	snapshot := func(tenant string) string {
		t.Helper()
		var b strings.Builder
		page, err := f.store.List(f.ctx, ledger.ListFilter{Tenant: tenant, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range page.Operations {
			evs, _ := f.store.Events(f.ctx, tenant, op.ID)
			fmt.Fprintf(&b, "%s %s events %d\n", op.ID, op.State, len(evs))
		}
		toks, _ := ts.ListTokens(f.ctx, tenant)
		cb, cbErr := cs.GetCallback(f.ctx, tenant)
		params, _ := ps.TenantParams(f.ctx, tenant)
		qs, _ := in.ListQuarantine(f.ctx, ledger.QuarantineFilter{Tenants: []string{tenant}})
		fds, _ := as.Findings(f.ctx, tenant, time.Time{})
		as, _ := acts.Actions(f.ctx, ledger.ActionFilter{Tenant: tenant})
		fmt.Fprintf(&b, "%d %s %s %s %d %d %d", len(toks), cb.URL, ledger.ErrorCode(cbErr), params["account"],
			len(qs), len(fds), len(as))
		return b.String()
	}
	before, globexBefore := snapshot("acme"), snapshot("globex")

	_, err := er.EraseTenant(f.ctx, "acme", false)
	wantCode(t, err, ledger.EConflict)
	if !strings.Contains(err.Error(), "1 operation not yet final") {
		t.Fatalf("refusal does not name the count: %v", err)
	}
	if got := snapshot("acme"); got != before {
		t.Fatalf("a refused erasure changed the tenant:\n%s\nwant\n%s", got, before)
	}
	_, err = er.EraseTenant(context.Background(), "acme", true)
	wantCode(t, err, ledger.EInvalid) // no actor

	e, err := er.EraseTenant(f.ctx, "acme", true)
	if err != nil {
		t.Fatal(err)
	}
	c := e.Counts
	if !e.Forced || e.Unfinished != 1 || c.Operations != 3 || c.Tokens != 1 || c.Callbacks != 1 || c.Params != 1 ||
		c.Findings != 1 || c.Quarantine != 1 || c.Deliveries != 1 || c.Notifications < 2 || c.Events < 9 ||
		c.Actions < 3 || c.Rollups == 0 || e.Subject != testActor.Subject {
		t.Fatalf("erasure: %+v", e)
	}
	for _, op := range acme.ops {
		_, err := f.store.Get(f.ctx, "acme", op.ID)
		wantCode(t, err, ledger.ENotFound)
	}
	if _, err := ts.TokenByHash(f.ctx, acme.token.Hash); ledger.ErrorCode(err) != ledger.ENotFound {
		t.Fatalf("the erased tenant's token still authenticates: %v", err)
	}
	if got := snapshot("acme"); got != "0  not_found  0 0 0" {
		t.Fatalf("after the erasure: %q", got)
	}
	if got := snapshot("globex"); got != globexBefore {
		t.Fatalf("another tenant's data changed:\n%s\nwant\n%s", got, globexBefore)
	}
	if _, err := ts.TokenByHash(f.ctx, globex.token.Hash); err != nil {
		t.Fatalf("another tenant's token: %v", err)
	}
	recs, err := er.Erasures(f.ctx, "acme")
	if err != nil || len(recs) != 1 || recs[0].ID != e.ID || recs[0].Counts != e.Counts || !recs[0].Forced ||
		recs[0].Subject != testActor.Subject || !recs[0].At.Equal(f.clk.Now()) {
		t.Fatalf("erasure record: %+v %v, want %+v", recs, err, e)
	}
	// Erasing an empty tenant is allowed and recorded.
	if e2, err := er.EraseTenant(f.ctx, "acme", false); err != nil || e2.Counts.Total() != 0 {
		t.Fatalf("second erasure: %+v %v", e2, err)
	}
	if recs, _ := er.Erasures(f.ctx, "acme"); len(recs) != 2 {
		t.Fatalf("records: %d", len(recs))
	}
}
