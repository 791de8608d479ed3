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
	"settle/target/sim"
)

// An endpoint that always answers 500 gets MaxAttempts requests and no
// more: the notification is given up, visible as such, counted and logged
// once.
func TestNotifier_GivesUpAfterMaxAttempts(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "A"}, nil)
		rc := newCBReceiver(t)
		rc.set(func(rc *cbReceiver) { rc.fail = 1 << 30 })
		cs := r.withCallbacks("acme", rc)
		op := r.confirmed("acme")[0]
		reg := prometheus.NewRegistry()
		var logs syncBuffer
		nt := r.notifier(r.store, reg, &logs)
		nt.MaxAttempts = 3
		givenUp := func() bool {
			n := r.cbNotification(op)
			return n.GaveUpAt != nil
		}
		r.runUntil("giving up", givenUp, nt)
		r.runUntil("a quiet while", quietFor(4*nt.MaxBackoff, nt), nt)

		if reqs := rc.requests(); len(reqs) != 3 {
			t.Fatalf("%d requests, want 3", len(reqs))
		}
		n := r.cbNotification(op)
		if n.Attempts != 3 || n.DeliveredAt != nil || n.LastStatus != http.StatusInternalServerError {
			t.Fatalf("given up: %+v", n)
		}
		g, err := cs.GivenUpNotifications(r.ctx, "acme", 5)
		if err != nil || g.Count != 1 || len(g.Latest) != 1 || g.Latest[0].ID != n.ID {
			t.Fatalf("given-up list = %+v, %v", g, err)
		}
		if f, u := cbCounter(t, reg, "settle_callbacks_failed_total"), cbCounter(t, reg, "settle_callbacks_given_up_total"); f != 3 || u != 1 {
			t.Fatalf("failed %v given up %v, want 3 and 1", f, u)
		}
		out := logs.String()
		if c := strings.Count(out, "delivery given up"); c != 1 || !strings.Contains(out, "level=WARN msg=\"delivery given up") {
			t.Fatalf("%d give-up lines, want one WARN:\n%s", c, out)
		}
		for _, secret := range []string{string(rc.secret), "sekrit-query-token", "amount"} {
			if strings.Contains(out, secret) {
				t.Fatalf("logs carry %q:\n%s", secret, out)
			}
		}

		// A retry queues it again, with a fresh count of attempts.
		rc.set(func(rc *cbReceiver) { rc.fail = 0 })
		if k, err := cs.RetryGivenUp(ledger.NewContextWithActor(r.ctx, ledger.Actor{Subject: "cli:ops", Name: "ops", Role: "admin"}), "acme", time.Now()); err != nil || k != 1 {
			t.Fatalf("retry = %d, %v", k, err)
		}
		r.runUntil("acknowledgement", rc.ackedAll(1), nt)
		if n := r.cbNotification(op); n.DeliveredAt == nil || n.GaveUpAt != nil || n.Attempts != 1 {
			t.Fatalf("after retry: %+v", n)
		}
	})
}
