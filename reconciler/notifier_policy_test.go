package reconciler_test

import (
	"net/netip"
	"strings"
	"testing"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/storetest"
	"settle/target/sim"
)

// A tenant's admin cannot aim callbacks at the server's own network: with
// the production policy (https only, no internal destinations) a loopback
// receiver is never called, and the outbox row says why.
func TestNotifier_RefusesInternalDestinations(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		for name, policy := range map[string]ledger.CallbackPolicy{
			"Production": {},
			// Plain http allowed, as in development, but not loopback.
			"HTTPOnly": {AllowHTTP: true},
			// Another internal net allowed, not this one.
			"OtherNet": {AllowHTTP: true, Allow: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}},
		} {
			t.Run(name, func(t *testing.T) {
				r := newRig(t, h, sim.Config{Class: "A"}, nil)
				rc := newCBReceiver(t)
				r.withCallbacks("acme", rc)
				op := r.confirmed("acme")[0]
				nt := r.notifier(r.store, nil, nil)
				nt.Policy = policy
				r.runUntil("a failed attempt", func() bool { return r.cbNotification(op).Attempts >= 2 }, nt)
				if got := rc.requests(); len(got) != 0 {
					t.Fatalf("the loopback receiver was called %d times", len(got))
				}
				n := r.cbNotification(op)
				if n.DeliveredAt != nil || !strings.Contains(n.LastError, "internal address") && !strings.Contains(n.LastError, "https://") {
					t.Fatalf("outbox row: %+v", n)
				}
			})
		}
	})
}
