package metrics_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/storetest"
	"settle/metrics"
)

// With tenant labels, only tenants that exist in the ledger become
// labels: 300 unverified webhooks, each claiming a tenant of its own (one
// with an ESC), are quarantined as the inbox does, and the quarantine gauge
// has one series for them all, "unknown", beside the real tenant's.
func TestCollector_OnlyLedgerTenantsBecomeLabels(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		t.Parallel()
		ctx := context.Background()
		s := h.New(t, time.Now)
		if _, _, err := s.Create(ctx, ledger.NewOperation{Tenant: "acme", Type: "charge", IntentRef: "i-1",
			Target: "payments", Payload: []byte(`{"amount":1}`)}); err != nil {
			t.Fatal(err)
		}
		in := s.(ledger.InboxStore)
		quarantine := func(tenant, id string) {
			t.Helper()
			if _, err := in.Quarantine(ctx, ledger.QuarantineItem{Target: "payments", Tenant: tenant,
				Reason: "signature does not verify", EventID: id}); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 300 {
			tenant := fmt.Sprintf("made-up-%d", i)
			if i == 7 {
				tenant = "esc\x1b[31mtenant" // PostgreSQL text cannot hold the NUL of the issue
			}
			quarantine(tenant, fmt.Sprintf("evt_%d", i))
		}
		quarantine("acme", "evt_acme")

		c := &metrics.Collector{Store: s.(ledger.GaugeStore), Targets: []string{"payments"}, TenantLabels: true}
		reg := prometheus.NewRegistry()
		reg.MustRegister(c)
		c.Read(ctx)
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "tenant" && mf.GetName() == "settle_quarantine_open" {
						got[l.GetValue()] += m.GetGauge().GetValue()
					}
					if l.GetName() == "tenant" && l.GetValue() != "acme" && l.GetValue() != metrics.UnknownTenant {
						t.Errorf("%s has a series of tenant %q", mf.GetName(), l.GetValue())
					}
				}
			}
		}
		if len(got) != 2 || got["acme"] != 1 || got[metrics.UnknownTenant] != 300 {
			t.Fatalf("quarantine series by tenant: %v", got)
		}
	})
}
