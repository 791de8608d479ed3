package metrics_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/storetest"
	"settle/metrics"
)

// countingGauges counts the statements the collector sends to a real
// store, and fails them while broken is set.
type countingGauges struct {
	ledger.GaugeStore
	calls  atomic.Int32
	broken atomic.Bool
	read   chan struct{}
}

func (c *countingGauges) Gauges(ctx context.Context, now time.Time) (ledger.Gauges, error) {
	c.calls.Add(1)
	defer func() {
		select {
		case c.read <- struct{}{}:
		default:
		}
	}()
	if c.broken.Load() {
		return ledger.Gauges{}, errors.New("database unreachable")
	}
	return c.GaugeStore.Gauges(ctx, now)
}

// Scrapes read the cached reading and never the database; a failed
// reading keeps the last good one and is counted; Run reads at once and
// then every Interval.
func TestCollector_CachesAndKeepsTheLastReading(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		t.Parallel()
		s := h.New(t, time.Now)
		n := ledger.NewOperation{Tenant: "acme", Type: "charge", IntentRef: "i-1", Target: "payments",
			Payload: []byte(`{"amount":1}`)}
		if _, _, err := s.Create(context.Background(), n); err != nil {
			t.Fatal(err)
		}
		gs := &countingGauges{GaugeStore: s.(ledger.GaugeStore), read: make(chan struct{}, 1)}
		c := &metrics.Collector{Store: gs, Targets: []string{"payments"}, Interval: time.Millisecond}
		reg := prometheus.NewRegistry()
		reg.MustRegister(c)

		// value is the first series of name (gauge or counter).
		value := func(name string) float64 {
			t.Helper()
			mfs, err := reg.Gather()
			if err != nil {
				t.Fatal(err)
			}
			for _, mf := range mfs {
				if mf.GetName() == name {
					m := mf.GetMetric()[0]
					return m.GetGauge().GetValue() + m.GetCounter().GetValue()
				}
			}
			t.Fatalf("no %s", name)
			return 0
		}
		queue := func() float64 { return value("settle_executor_queue_depth") }
		if q := queue(); q != 0 || gs.calls.Load() != 0 {
			t.Fatalf("before any reading: queue %v, %d statements", q, gs.calls.Load())
		}
		c.Read(context.Background())
		for range 3 {
			if q := queue(); q != 1 {
				t.Fatalf("queue %v, want 1", q)
			}
		}
		if n := gs.calls.Load(); n != 1 {
			t.Fatalf("%d statements for one reading and three scrapes", n)
		}
		gs.broken.Store(true)
		c.Read(context.Background())
		if q, f := queue(), value("settle_gauges_read_failures_total"); q != 1 || f != 1 {
			t.Fatalf("after a failed reading: queue %v (want the last good 1), failures %v", q, f)
		}
		gs.broken.Store(false)
		select { // the signal of the readings above
		case <-gs.read:
		default:
		}

		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- c.Run(ctx) }()
		for range 2 { // one at once, one a tick later
			<-gs.read
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}
