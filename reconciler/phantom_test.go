package reconciler_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/storetest"
	"settle/target/sim"
)

// notApplied drives a new operation to FAILED_TERMINAL the way the
// executor does: its first send is rate limited, documented as having no
// side effect.
func (r *rig) notApplied(tenant, intent string) ledger.Operation {
	r.t.Helper()
	r.sim.Script(sim.RateLimited)
	op := r.create(tenant, intent, 700)
	r.runUntil("FAILED_TERMINAL", r.isIn(op, ledger.FailedTerminal), r.executor(r.store))
	return r.get(op)
}

// behindSettlesBack creates at the target, without settle, an object that
// carries op's reference and the tenant given.
func (r *rig) behindSettlesBack(op ledger.Operation, tenant string) {
	r.t.Helper()
	body := fmt.Sprintf(`{"amount":700,"currency":"EUR","metadata":{"settle_ref":%q,"settle_tenant":%q}}`, op.RemoteKey, tenant)
	resp, err := http.Post(r.srv.URL()+"/v1/charges", "application/json", strings.NewReader(body))
	if err != nil {
		r.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		r.t.Fatalf("object behind settle's back: %d", resp.StatusCode)
	}
}

// An object at the target carrying the reference and tenant of an
// operation settle calls "Not applied" is a phantom: recorded once,
// escalated, counted; the FAILED_TERMINAL operation itself never changes.
func TestAuditor_Phantom(t *testing.T) {
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "B"}, nil)
		r.confirmed("acme")
		clean := r.notApplied("acme", "order-clean")
		op := r.notApplied("globex", "order-phantom")
		other := r.notApplied("acme", "order-foreign")
		r.behindSettlesBack(op, "globex")
		r.behindSettlesBack(other, "initech") // another tenant's object is no evidence about acme's operation

		reg := prometheus.NewRegistry()
		a := r.auditor(reg)
		for pass := 1; pass <= 2; pass++ {
			rep := r.audit(a)
			if rep.Checked != 4 || rep.Phantoms != 1 || rep.Duplicates+rep.Losses != 0 || rep.Clean() ||
				len(rep.Findings) != 1 || rep.Findings[0].New != (pass == 1) {
				t.Fatalf("pass %d: %+v", pass, rep)
			}
		}
		if got := counter(t, reg, "settle_audit_phantoms_total"); got != 1 {
			t.Fatalf("phantom counter %v, want 1 (one finding, counted once)", got)
		}
		fs := r.findings("globex")
		if len(fs) != 1 || fs[0].Kind != ledger.FindingPhantom || fs[0].OperationID != op.ID || !fs[0].Escalated ||
			len(fs[0].RemoteIDs) != 1 || fs[0].RemoteIDs[0] != r.sim.Objects()[len(r.sim.Objects())-2].ID {
			t.Fatalf("globex findings %+v, want one escalated phantom of %s", fs, op.ID)
		}
		if n := r.countFindings("acme", ""); n != 0 {
			t.Fatalf("acme has %d findings; its clean and foreign-object operations are not phantoms", n)
		}
		if got := r.get(op); got.State != ledger.FailedTerminal || !got.UpdatedAt.Equal(op.UpdatedAt) {
			t.Fatalf("the operation changed: %+v", got)
		}
		if got := r.get(clean); got.State != ledger.FailedTerminal {
			t.Fatalf("clean operation: %s", got.State)
		}
	})
}

// The periodic walk covers FAILED_TERMINAL operations too, and meets a
// phantom that appears after it first checked the operation.
func TestAuditor_RunFindsLaterPhantom(t *testing.T) {
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "B"}, nil)
		r.confirmed("acme", "globex")
		op := r.notApplied("acme", "order-late")
		r.confirmed("globex")
		reg := prometheus.NewRegistry()
		a := r.auditor(reg) // batches of 2
		r.runUntil("one full walk", func() bool {
			return counter(t, reg, "settle_audit_checked_total") >= 5
		}, a)
		if n := r.countFindings("acme", ""); n != 0 {
			t.Fatalf("%d findings before the object appeared", n)
		}
		r.behindSettlesBack(op, "acme") // a late request landing after settle gave up
		r.runUntil("the phantom found", func() bool {
			return r.countFindings("acme", ledger.FindingPhantom) == 1
		}, a)
	})
}
