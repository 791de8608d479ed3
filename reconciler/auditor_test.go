package reconciler_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/storetest"
	"settle/reconciler"
	"settle/target"
	"settle/target/sim"
)

func (r *rig) auditStore() ledger.AuditStore {
	r.t.Helper()
	as, ok := r.store.(ledger.AuditStore)
	if !ok {
		r.t.Fatal("store does not implement ledger.AuditStore")
	}
	return as
}

func (r *rig) auditor(reg prometheus.Registerer) *reconciler.Auditor {
	return &reconciler.Auditor{Audit: r.auditStore(), Contracts: r.set, Client: r.client, Log: r.log,
		Metrics: reg, Batch: 2, Interval: 20 * time.Millisecond}
}

func (r *rig) audit(a *reconciler.Auditor) reconciler.Report {
	r.t.Helper()
	rep, err := a.AuditTarget(r.ctx, r.c.Name)
	if err != nil {
		r.t.Fatal(err)
	}
	return rep
}

func (r *rig) findings(tenant string) []ledger.Finding {
	r.t.Helper()
	fs, err := r.auditStore().Findings(r.ctx, tenant, time.Time{})
	if err != nil {
		r.t.Fatal(err)
	}
	return fs
}

func (r *rig) countFindings(tenant string, kind ledger.FindingKind) int {
	r.t.Helper()
	n, err := r.auditStore().CountFindings(r.ctx, tenant, kind, ledger.Since(time.Time{}))
	if err != nil {
		r.t.Fatal(err)
	}
	return n
}

// counter reads one settle_audit_* counter for target "payments" from the
// registry, as /metrics would. (prometheus/testutil would need a module
// this go.mod does not require.)
func counter(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "target" && l.GetValue() == "payments" {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// The simulated target, told to create a duplicate behind settle's back,
// is caught by the auditor: one finding with both object ids, recorded once
// however often the audit runs, and counted.
func TestAuditor_Duplicate(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "B"}, nil)
		ops := r.confirmed("acme", "acme", "globex")
		reg := prometheus.NewRegistry()
		a := r.auditor(reg)
		if rep := r.audit(a); !rep.Clean() || rep.Checked != 3 {
			t.Fatalf("before the duplicate: %+v", rep)
		}

		dup, err := r.sim.Duplicate(ops[1].RemoteKey)
		if err != nil {
			t.Fatal(err)
		}
		for pass := 1; pass <= 2; pass++ {
			rep := r.audit(a)
			if rep.Checked != 3 || rep.Duplicates != 1 || rep.Losses != 0 || rep.LookupsFailed != 0 ||
				len(rep.Findings) != 1 || rep.Findings[0].New != (pass == 1) {
				t.Fatalf("pass %d: %+v", pass, rep)
			}
		}
		fs := r.findings("acme")
		if len(fs) != 1 {
			t.Fatalf("%d findings, want 1", len(fs))
		}
		f := fs[0]
		want := []string{ops[1].RemoteRef, dup.ID}
		if f.Kind != ledger.FindingDuplicate || f.OperationID != ops[1].ID || f.Target != "payments" ||
			!slices.Equal(f.RemoteIDs, want) || f.Escalated || !strings.Contains(string(f.Evidence), ops[1].RemoteRef) {
			t.Fatalf("finding %+v, want duplicate of %s with ids %v", f, ops[1].ID, want)
		}
		if n := r.countFindings("acme", ledger.FindingDuplicate); n != 1 {
			t.Fatalf("acme duplicates counted: %d", n)
		}
		if n := r.countFindings("globex", ""); n != 0 {
			t.Fatalf("globex findings: %d", n)
		}
		if got := counter(t, reg, "settle_audit_duplicates_total"); got != 1 {
			t.Fatalf("duplicate counter %v, want 1", got)
		}
		if got := counter(t, reg, "settle_audit_checked_total"); got != 9 {
			t.Fatalf("checked counter %v, want 9 (three passes over three operations)", got)
		}
		// SUCCEEDED is final: the audit changed nothing in the ledger.
		if got := r.get(ops[1]); got.State != ledger.Succeeded || got.RemoteRef != ops[1].RemoteRef ||
			len(r.history(ops[1])) != 3 {
			t.Fatalf("operation changed: %+v %v", got, r.history(ops[1]))
		}
	})
}

// A SUCCEEDED operation whose object the target does not have is a loss:
// recorded, escalated to the owning team, counted; the operation stays as
// it is.
func TestAuditor_Loss(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "B"}, nil)
		kept := r.confirmed("acme")[0]
		op := r.create("acme", "order-lost", 700)
		op, err := r.store.Claim(r.ctx, op.Tenant, op.ID, op.PayloadHash, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		op, err = r.store.Record(r.ctx, ledger.Outcome{Tenant: op.Tenant, OperationID: op.ID, Fence: op.Fence,
			From: ledger.InFlight, To: ledger.Succeeded, RemoteRef: "ch_never_created", Actor: ledger.ActorExecutor,
			Reason: "test: confirmed by an object the target never had"})
		if err != nil {
			t.Fatal(err)
		}
		reg := prometheus.NewRegistry()
		rep := r.audit(r.auditor(reg))
		if rep.Checked != 2 || rep.Losses != 1 || rep.Duplicates != 0 || rep.NewFindings != 1 || rep.Clean() {
			t.Fatalf("report %+v", rep)
		}
		fs := r.findings("acme")
		if len(fs) != 1 || fs[0].Kind != ledger.FindingLoss || fs[0].OperationID != op.ID || !fs[0].Escalated ||
			len(fs[0].RemoteIDs) != 0 || !strings.Contains(string(fs[0].Evidence), "ch_never_created") {
			t.Fatalf("findings %+v", fs)
		}
		if got := counter(t, reg, "settle_audit_losses_total"); got != 1 {
			t.Fatalf("loss counter %v", got)
		}
		if got := r.get(op); got.State != ledger.Succeeded || !got.UpdatedAt.Equal(op.UpdatedAt) {
			t.Fatalf("the lost operation changed: %+v", got)
		}
		if r.countFindings("acme", ledger.FindingLoss) != 1 || r.get(kept).State != ledger.Succeeded {
			t.Fatal("the confirmed operation must not be a loss")
		}
	})
}

// Within the documented propagation limit, "not found" is not yet a loss.
func TestAuditor_LossWaitsForPropagation(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "B"}, func(c *target.Contract) {
			c.Lookup.ReadAfterWrite, c.Lookup.PropagationLimit = false, time.Hour
		})
		op := r.confirmed("acme")[0]
		r.sim.SetLookupLag(time.Hour) // the object is not visible yet
		a := r.auditor(nil)
		if rep := r.audit(a); rep.TooRecent != 1 || rep.Losses != 0 || len(rep.Findings) != 0 {
			t.Fatalf("inside the limit: %+v", rep)
		}
		a.Now = func() time.Time { return time.Now().Add(2 * time.Hour) }
		if rep := r.audit(a); rep.Losses != 1 || rep.Findings[0].OperationID != op.ID {
			t.Fatalf("past the limit: %+v", rep)
		}
	})
}

// Another tenant's object carrying the same reference is not this tenant's
// duplicate.
func TestAuditor_OtherTenantNotDuplicate(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "B"}, nil)
		op := r.confirmed("acme")[0]
		body := fmt.Sprintf(`{"amount":100,"currency":"EUR","metadata":{"settle_ref":%q,"settle_tenant":"globex"}}`, op.RemoteKey)
		resp, err := http.Post(r.srv.URL()+"/v1/charges", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated || r.remote(op) != 2 {
			t.Fatalf("foreign object: %d, %d objects with the reference", resp.StatusCode, r.remote(op))
		}
		rep := r.audit(r.auditor(nil))
		if !rep.Clean() || rep.Checked != 1 {
			t.Fatalf("report %+v", rep)
		}
		if n := r.countFindings("acme", "") + r.countFindings("globex", ""); n != 0 {
			t.Fatalf("%d findings", n)
		}
	})
}

// A lookup that fails proves nothing: counted, never a finding.
func TestAuditor_LookupFailureIsNoFinding(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "B"}, nil)
		r.confirmed("acme")
		r.srv.Close()
		rep := r.audit(r.auditor(nil))
		if rep.LookupsFailed != 1 || rep.Checked != 0 || len(rep.Findings) != 0 || rep.Clean() {
			t.Fatalf("report %+v", rep)
		}
		if n := r.countFindings("acme", ""); n != 0 {
			t.Fatalf("%d findings", n)
		}
	})
}

// A target without a lookup cannot be audited, and says so.
func TestAuditor_SkipsTargetWithoutLookup(t *testing.T) {
	t.Parallel()
	r := newRig(t, storetest.SQLite(), sim.Config{Class: "D"}, nil)
	rep := r.audit(r.auditor(nil))
	if rep.Skipped == "" || rep.Clean() {
		t.Fatalf("report %+v", rep)
	}
}

// The periodic auditor walks the SUCCEEDED operations a batch at a time
// from its saved position, starts over at the end, and so finds a
// duplicate made after it had already checked the operation.
func TestAuditor_RunFindsLaterDuplicate(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "B"}, nil)
		ops := r.confirmed("acme", "globex", "acme", "globex", "acme")
		reg := prometheus.NewRegistry()
		a := r.auditor(reg) // batches of 2
		r.runUntil("one full walk", func() bool {
			return counter(t, reg, "settle_audit_checked_total") >= float64(len(ops)+1)
		}, a)
		if n := r.countFindings("globex", ""); n != 0 {
			t.Fatalf("%d findings before the duplicate", n)
		}
		if _, err := r.auditStore().AuditPosition(r.ctx, "payments"); err != nil {
			t.Fatalf("the walk saved no position: %v", err)
		}

		if _, err := r.sim.Duplicate(ops[3].RemoteKey); err != nil {
			t.Fatal(err)
		}
		r.runUntil("the duplicate found", func() bool {
			return r.countFindings("globex", ledger.FindingDuplicate) == 1
		}, a)
		// Keep walking: the open finding is not recorded or counted again.
		r.runUntil("another full walk", func() bool {
			return counter(t, reg, "settle_audit_checked_total") >= float64(4*len(ops))
		}, a)
		fs := r.findings("globex")
		if len(fs) != 1 || fs[0].OperationID != ops[3].ID || r.countFindings("acme", "") != 0 {
			t.Fatalf("findings %+v", fs)
		}
		if got := counter(t, reg, "settle_audit_duplicates_total"); got != 1 {
			t.Fatalf("duplicate counter %v", got)
		}
	})
}
