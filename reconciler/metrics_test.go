package reconciler_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/storetest"
	"settle/metrics"
	"settle/target/sim"
)

// A scripted day, on both stores, scraped over HTTP: five sends, two of
// whose answers are lost (UNKNOWN, then settled by the reconciler), one
// escalation, one lease the sweeper expires, one operation still queued
// and one quarantined event. Every ledger metric has its exact value: the
// store's observer counts every claim, whoever made it, and the swept
// lease by its target.
func TestMetrics_Scenario(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "A"}, nil)
		reg := prometheus.NewRegistry()
		m := metrics.New(reg, metrics.Options{})
		r.store.(ledger.Observable).SetObserver(metrics.Observer{Metrics: m, Events: r.store, Log: r.log})
		counted := r.store

		// The first send of each "drop-" charge is committed by the target
		// and its answer lost; the reconciler's replay gets through.
		var mu sync.Mutex
		seen := map[string]bool{}
		r.proxy(func(w http.ResponseWriter, req *http.Request, next http.Handler) {
			if req.Method != http.MethodPost {
				next.ServeHTTP(w, req)
				return
			}
			body, _ := io.ReadAll(req.Body)
			req.Body = io.NopCloser(bytes.NewReader(body))
			mu.Lock()
			lose := bytes.Contains(body, []byte(`"drop-`)) && !seen[string(body)]
			seen[string(body)] = true
			mu.Unlock()
			if lose {
				next.ServeHTTP(httptest.NewRecorder(), req)
				w.WriteHeader(http.StatusInternalServerError)
				return
			}
			next.ServeHTTP(w, req)
		})
		var ops []ledger.Operation
		for i := range 3 {
			ops = append(ops, r.create("acme", fmt.Sprintf("ok-%d", i), 100+i))
		}
		for i := range 2 {
			ops = append(ops, r.create("globex", fmt.Sprintf("drop-%d", i), 200+i))
		}
		rec := r.reconciler()
		rec.Store = counted
		r.runUntil("five SUCCEEDED", func() bool {
			for _, op := range ops {
				if r.get(op).State != ledger.Succeeded {
					return false
				}
			}
			return true
		}, r.executor(counted), rec)

		// One escalation, recorded as the executor records a lost answer
		// it may not resend.
		esc := r.create("acme", "esc-1", 700)
		claimed, err := r.store.Claim(r.ctx, esc.Tenant, esc.ID, esc.PayloadHash, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		esc, err = counted.Record(r.ctx, ledger.Outcome{Tenant: esc.Tenant, OperationID: esc.ID, Fence: claimed.Fence,
			From: ledger.InFlight, To: ledger.Escalated, Actor: ledger.ActorExecutor, Reason: "answer lost"})
		if err != nil {
			t.Fatal(err)
		}
		// One lease that runs out, swept into UNKNOWN: due for the reconciler.
		swept := r.create("acme", "swept-1", 800)
		if _, err := r.store.Claim(r.ctx, swept.Tenant, swept.ID, swept.PayloadHash, time.Millisecond); err != nil {
			t.Fatal(err)
		}
		r.waitFor("the lease swept", func() bool {
			n, err := counted.SweepExpired(r.ctx)
			if err != nil {
				t.Fatal(err)
			}
			return n == 1
		})
		r.create("acme", "queued-1", 900) // PREPARED: the executor's queue
		in := r.store.(ledger.InboxStore)
		actx := ledger.NewContextWithActor(r.ctx, ledger.Actor{Subject: "cli:test", Name: "test", Role: "admin"})
		if _, err := in.Quarantine(actx, ledger.QuarantineItem{Target: "payments", Reason: "no tenant", EventID: "evt_1"}); err != nil {
			t.Fatal(err)
		}

		gauges := &metrics.Collector{Store: r.store.(ledger.GaugeStore), Targets: []string{"payments"},
			Now: func() time.Time { return esc.UpdatedAt.Add(90 * time.Second) }}
		reg.MustRegister(gauges)
		gauges.Read(r.ctx)
		srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		defer srv.Close()
		resp, err := http.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		page := string(b)

		for _, want := range []string{
			`settle_transitions_total{from="PREPARED",to="IN_FLIGHT"} 7`,
			`settle_transitions_total{from="IN_FLIGHT",to="SUCCEEDED"} 3`,
			`settle_transitions_total{from="IN_FLIGHT",to="UNKNOWN"} 3`,
			`settle_transitions_total{from="UNKNOWN",to="SUCCEEDED"} 2`,
			`settle_transitions_total{from="IN_FLIGHT",to="ESCALATED"} 1`,
			`settle_unknown_entries_total{target="payments"} 3`,
			`settle_resolution_seconds_count{target="payments",to="SUCCEEDED"} 2`,
			`settle_payload_conflicts_total 0`,
			`settle_operations{state="ESCALATED",target="payments"} 1`,
			`settle_operations{state="IN_FLIGHT",target="payments"} 0`,
			`settle_operations{state="PREPARED",target="payments"} 1`,
			`settle_operations{state="UNKNOWN",target="payments"} 1`,
			`settle_executor_queue_depth{target="payments"} 1`,
			`settle_reconciler_queue_depth{target="payments"} 1`,
			`settle_oldest_escalation_age_seconds 90`,
			`settle_quarantine_open{target="payments"} 1`,
			`settle_gauges_read_failures_total 0`,
		} {
			if !strings.Contains(page, want+"\n") {
				t.Errorf("/metrics lacks %q", want)
			}
		}
		if t.Failed() || strings.Contains(page, `tenant="`) || strings.Contains(page, `target=""`) {
			t.Errorf("tenant labels off; settle's series:\n%s", settleSeries(page))
		}
	})
}

// With tenant labels on, the gauges and counters are per tenant.
func TestMetrics_TenantLabels(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "A"}, nil)
		reg := prometheus.NewRegistry()
		m := metrics.New(reg, metrics.Options{TenantLabels: true})
		r.store.(ledger.Observable).SetObserver(metrics.Observer{Metrics: m, Events: r.store, Log: r.log})
		counted := r.store
		a, g := r.create("acme", "a-1", 100), r.create("globex", "g-1", 200)
		r.runUntil("both SUCCEEDED", func() bool {
			return r.get(a).State == ledger.Succeeded && r.get(g).State == ledger.Succeeded
		}, r.executor(counted))
		r.create("globex", "g-2", 300) // queued
		gauges := &metrics.Collector{Store: r.store.(ledger.GaugeStore), TenantLabels: true}
		reg.MustRegister(gauges)
		gauges.Read(r.ctx)
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		var buf strings.Builder
		for _, mf := range mfs {
			for _, x := range mf.GetMetric() {
				var labels []string
				for _, l := range x.GetLabel() {
					labels = append(labels, l.GetName()+"="+l.GetValue())
				}
				v := x.GetCounter().GetValue() + x.GetGauge().GetValue()
				fmt.Fprintf(&buf, "%s{%s} %g\n", mf.GetName(), strings.Join(labels, ","), v)
			}
		}
		page := buf.String()
		for _, want := range []string{
			"settle_transitions_total{from=PREPARED,tenant=acme,to=IN_FLIGHT} 1",
			"settle_transitions_total{from=IN_FLIGHT,tenant=globex,to=SUCCEEDED} 1",
			"settle_operations{state=PREPARED,target=payments,tenant=globex} 1",
			"settle_executor_queue_depth{target=payments,tenant=globex} 1",
		} {
			if !strings.Contains(page, want+"\n") {
				t.Errorf("lacks %q:\n%s", want, page)
			}
		}
	})
}

func settleSeries(page string) string {
	var out []string
	for _, l := range strings.Split(page, "\n") {
		if strings.HasPrefix(l, "settle_") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
