package reconciler_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/storetest"
	"settle/target"
)

// An owning team's endpoint that always answers 500 gets MaxAttempts
// notices of an escalation and no more, by the rule client callbacks
// follow: the notice is given up, listed as such, counted and logged once,
// and a retry delivers it.
func TestEscalationNotifier_GivesUpAfterMaxAttempts(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		rc := newCBReceiver(t)
		rc.set(func(rc *cbReceiver) { rc.fail = 1 << 30 })
		r := notifyRig(t, h, rc, target.NotifySettle)
		op := r.escalate("acme", "order-esc-giveup", "the target said the charge was not sent")
		es := r.store.(ledger.EscalationStore)
		notice := func() ledger.Notification {
			ns, err := es.EscalationNotices(r.ctx, "acme", op.ID)
			if err != nil || len(ns) != 1 {
				t.Fatalf("notices %+v, %v", ns, err)
			}
			return ns[0]
		}
		reg := prometheus.NewRegistry()
		var logs syncBuffer
		nt := r.escalationNotifier(r.store, rc.secret, &logs)
		nt.MaxAttempts, nt.Metrics = 3, reg
		r.runUntil("giving up", func() bool { return notice().GaveUpAt != nil }, nt)
		r.runUntil("a quiet while", quietNotices(nt), nt)

		if reqs := rc.requests(); len(reqs) != 3 {
			t.Fatalf("%d requests, want 3", len(reqs))
		}
		n := notice()
		if n.Attempts != 3 || n.DeliveredAt != nil || n.LastStatus != http.StatusInternalServerError {
			t.Fatalf("given up: %+v", n)
		}
		g, err := es.GivenUpEscalationNotices(r.ctx, "acme", 5)
		if err != nil || g.Count != 1 || len(g.Latest) != 1 || g.Latest[0].ID != n.ID {
			t.Fatalf("given-up list = %+v, %v", g, err)
		}
		if u := plainCounter(t, reg, "settle_escalation_notices_given_up_total"); u != 1 {
			t.Fatalf("given up counted %v, want 1", u)
		}
		out := logs.String()
		if c := strings.Count(out, "escalation notice given up"); c != 1 ||
			!strings.Contains(out, "level=WARN msg=\"escalation notice given up; `settle escalation notices --retry`") {
			t.Fatalf("%d give-up lines, want one WARN:\n%s", c, out)
		}

		rc.set(func(rc *cbReceiver) { rc.fail = 0 })
		if k, err := es.RetryGivenUpEscalationNotices(ledger.NewContextWithActor(r.ctx, ledger.Actor{Subject: "cli:ops", Name: "ops", Role: "admin"}), "acme", time.Now()); err != nil || k != 1 {
			t.Fatalf("retry = %d, %v", k, err)
		}
		r.runUntil("acknowledgement", rc.ackedAll(1), nt)
		if n := notice(); n.DeliveredAt == nil || n.GaveUpAt != nil || n.Attempts != 1 {
			t.Fatalf("after retry: %+v", n)
		}
	})
}

// plainCounter is the value of the unlabelled counter name in reg, 0 if
// absent.
func plainCounter(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	return 0
}
