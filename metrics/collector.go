package metrics

import (
	"context"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"settle/ledger"
)

// Collector exports the database-wide gauges from one reading of
// ledger.GaugeStore.Gauges every Interval, cached between readings, so
// that any number of scrapers (and replicas) cost one statement per
// replica per interval. Every replica reads the same database, so every
// replica exports the same values; aggregate them with max, not sum.
type Collector struct {
	Store ledger.GaugeStore
	// Targets are the configured targets: without tenant labels, each
	// gets a zero series for every live state, so that an alert on a
	// queue sees 0, not "no data".
	Targets      []string
	TenantLabels bool
	Interval     time.Duration // default 15s
	Now          func() time.Time
	Log          *slog.Logger

	mu   sync.Mutex
	last ledger.Gauges
	at   time.Time // when last was read; zero before the first reading
	fail float64   // readings that failed

	descs collectorDescs
	once  sync.Once
}

// UnknownTenant is the tenant label of quarantined events whose tenant
// has no operations in the ledger: webhook senders name tenants freely,
// and each name must not become a series.
const UnknownTenant = "unknown"

type collectorDescs struct {
	ops, prepared, due, overdue, oldest, quarantine, readAt, failures *prometheus.Desc
}

func (c *Collector) init() {
	c.once.Do(func() {
		if c.Now == nil {
			c.Now = time.Now
		}
		if c.Interval <= 0 {
			c.Interval = 15 * time.Second
		}
		var tenant []string
		if c.TenantLabels {
			tenant = []string{"tenant"}
		}
		l := func(names ...string) []string { return append(names, tenant...) }
		c.descs = collectorDescs{
			ops: prometheus.NewDesc("settle_operations", "Live operations (PREPARED, IN_FLIGHT, UNKNOWN, ESCALATED) by state and target, as of the last gauge reading.",
				l("state", "target"), nil),
			prepared: prometheus.NewDesc("settle_executor_queue_depth", "PREPARED operations waiting for the executor to send them, by target.",
				l("target"), nil),
			due: prometheus.NewDesc("settle_reconciler_queue_depth", "UNKNOWN operations due for reconciliation now, by target.",
				l("target"), nil),
			overdue: prometheus.NewDesc("settle_overdue_operations", "UNKNOWN operations past their deadline, by target: in the escalation queue, waiting for people, until the reconciler escalates them on its next round.",
				l("target"), nil),
			oldest: prometheus.NewDesc("settle_oldest_escalation_age_seconds", "Age of the oldest open escalation (0 with none): how long people have left it waiting.",
				l(), nil),
			quarantine: prometheus.NewDesc("settle_quarantine_open", "Open (unresolved) quarantined inbound events, by target.",
				l("target"), nil),
			readAt: prometheus.NewDesc("settle_gauges_read_timestamp_seconds", "When the database-wide gauges were last read (Unix time; 0 before the first reading).",
				nil, nil),
			failures: prometheus.NewDesc("settle_gauges_read_failures_total", "Failed readings of the database-wide gauges.",
				nil, nil),
		}
	})
}

// Run reads the gauges at once and then every Interval until ctx is
// cancelled.
func (c *Collector) Run(ctx context.Context) error {
	c.init()
	t := time.NewTicker(c.Interval)
	defer t.Stop()
	for {
		c.Read(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Read reads the gauges once and caches them; a failed reading keeps the
// previous one (its timestamp tells how stale it is).
func (c *Collector) Read(ctx context.Context) {
	c.init()
	now := c.Now()
	g, err := c.Store.Gauges(ctx, now)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		if ctx.Err() == nil {
			c.fail++
			if c.Log != nil {
				c.Log.Error("reading the metrics gauges failed", "err", err)
			}
		}
		return
	}
	c.last, c.at = g, now
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	c.init()
	d := c.descs
	for _, x := range []*prometheus.Desc{d.ops, d.prepared, d.due, d.overdue, d.oldest, d.quarantine, d.readAt, d.failures} {
		ch <- x
	}
}

// series is one gauge value under its label values (tenant last when on).
type series map[[3]string]float64

// Collect implements prometheus.Collector from the cached reading; it
// never queries the database.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.init()
	c.mu.Lock()
	g, at, fail := c.last, c.at, c.fail
	c.mu.Unlock()
	now := c.Now()

	ops, prepared, due, overdue, quarantine := series{}, series{}, series{}, series{}, series{}
	oldest := map[string]time.Time{} // by tenant ("" without tenant labels)
	tenant := func(t string) string {
		if c.TenantLabels {
			return t
		}
		return ""
	}
	if !c.TenantLabels {
		for _, target := range c.Targets {
			for _, st := range ledger.LiveStates {
				ops[[3]string{string(st), target}] = 0
			}
			prepared[[3]string{target}], due[[3]string{target}], overdue[[3]string{target}], quarantine[[3]string{target}] = 0, 0, 0, 0
		}
		oldest[""] = time.Time{}
	}
	for _, s := range g.States {
		tn := tenant(s.Tenant)
		ops[[3]string{string(s.State), s.Target, tn}] += float64(s.Count)
		switch s.State {
		case ledger.Prepared:
			prepared[[3]string{s.Target, tn}] += float64(s.Count)
		case ledger.Unknown:
			due[[3]string{s.Target, tn}] += float64(s.Due)
			overdue[[3]string{s.Target, tn}] += float64(s.Overdue)
		case ledger.Escalated:
			if o, ok := oldest[tn]; !ok || o.IsZero() || s.Oldest.Before(o) {
				oldest[tn] = s.Oldest
			}
		}
	}
	for _, q := range g.Quarantine {
		tn := q.Tenant
		if !q.Known {
			// A tenant named only by an unverified webhook: one series for
			// all of them, however many names senders make up.
			tn = UnknownTenant
		}
		quarantine[[3]string{q.Target, tenant(tn)}] += float64(q.Count)
	}
	emit := func(d *prometheus.Desc, s series, n int) {
		keys := make([][3]string, 0, len(s))
		for k := range s {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return keys[i][0]+"\x00"+keys[i][1] < keys[j][0]+"\x00"+keys[j][1] })
		for _, k := range keys {
			values := k[:n]
			if c.TenantLabels {
				values = k[:n+1]
			}
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, s[k], values...)
		}
	}
	emit(c.descs.ops, ops, 2)
	emit(c.descs.prepared, prepared, 1)
	emit(c.descs.due, due, 1)
	emit(c.descs.overdue, overdue, 1)
	emit(c.descs.quarantine, quarantine, 1)
	for tn, o := range oldest {
		age := 0.0
		if !o.IsZero() {
			age = max(now.Sub(o).Seconds(), 0)
		}
		var values []string
		if c.TenantLabels {
			values = []string{tn}
		}
		ch <- prometheus.MustNewConstMetric(c.descs.oldest, prometheus.GaugeValue, age, values...)
	}
	readAt := 0.0
	if !at.IsZero() {
		readAt = float64(at.UnixNano()) / 1e9
	}
	ch <- prometheus.MustNewConstMetric(c.descs.readAt, prometheus.GaugeValue, readAt)
	ch <- prometheus.MustNewConstMetric(c.descs.failures, prometheus.CounterValue, fail)
}
