// Package metrics exports settle's operator metrics to Prometheus: the
// counters of what the ledger commits (transitions, UNKNOWN entries, time
// to resolution, payload conflicts), counted in-process by the stores'
// observer (Observer) after each commit,
// and the database-wide gauges, read by one periodic statement per store
// (Collector) and never per scrape. Everything is registered on the
// registry `settle serve` builds; there is no global state.
//
// Tenant labels multiply the series by the tenants, so they are off unless
// asked for (Options.TenantLabels, `--metrics-tenant-labels`).
package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"settle/ledger"
)

// Options configure the metrics.
type Options struct {
	// TenantLabels adds a tenant label to the ledger's counters and
	// gauges. Off by default: one series per tenant is the operator's
	// choice to pay for.
	TenantLabels bool
}

// ResolutionBuckets are the time-to-resolution histogram's bounds in
// seconds: from 1s (a replay answered at once) to 7 days (an escalation
// that waited for people).
var ResolutionBuckets = []float64{1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 12 * 3600, 86400, 2 * 86400, 7 * 86400}

// Metrics are the in-process counters of the ledger's events.
type Metrics struct {
	tenants     bool
	transitions *prometheus.CounterVec
	unknown     *prometheus.CounterVec
	resolution  *prometheus.HistogramVec
	conflicts   *prometheus.CounterVec
}

// New registers the counters on reg.
func New(reg prometheus.Registerer, o Options) *Metrics {
	labels := func(names ...string) []string {
		if o.TenantLabels {
			return append(names, "tenant")
		}
		return names
	}
	m := &Metrics{tenants: o.TenantLabels}
	m.transitions = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "settle_transitions_total",
		Help: "State transitions committed to the ledger (by the executor, sweeper, reconciler, webhook inbox and approved resolutions), by from and to state."},
		labels("from", "to"))
	m.unknown = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "settle_unknown_entries_total",
		Help: "Operations entering UNKNOWN (an ambiguous outcome, an expired lease, an approved replay), by target."},
		labels("target"))
	m.resolution = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "settle_resolution_seconds",
		Help:    "Time from entering UNKNOWN to SUCCEEDED, FAILED_TERMINAL or ESCALATED, by target and final state.",
		Buckets: ResolutionBuckets}, labels("target", "to"))
	m.conflicts = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "settle_payload_conflicts_total",
		Help: "API creates refused because the same intent arrived with a different payload."}, labels())
	reg.MustRegister(m.transitions, m.unknown, m.resolution, m.conflicts)
	if !o.TenantLabels {
		m.conflicts.WithLabelValues() // 0 from the start: an alert sees 0, not "no data"
	}
	return m
}

// with appends the tenant to values when tenant labels are on.
func (m *Metrics) with(tenant string, values ...string) []string {
	if m.tenants {
		return append(values, tenant)
	}
	return values
}

// Transition counts one recorded transition.
func (m *Metrics) Transition(tenant string, from, to ledger.State) {
	m.transitions.WithLabelValues(m.with(tenant, string(from), string(to))...).Inc()
}

// UnknownEntry counts one operation of target entering UNKNOWN.
func (m *Metrics) UnknownEntry(tenant, target string) {
	m.unknown.WithLabelValues(m.with(tenant, target)...).Inc()
}

// Resolved observes the time an operation of target spent from entering
// UNKNOWN to its resolution to.
func (m *Metrics) Resolved(tenant, target string, to ledger.State, d time.Duration) {
	m.resolution.WithLabelValues(m.with(tenant, target, string(to))...).Observe(d.Seconds())
}

// PayloadConflict counts one refused create.
func (m *Metrics) PayloadConflict(tenant string) {
	m.conflicts.WithLabelValues(m.with(tenant)...).Inc()
}
