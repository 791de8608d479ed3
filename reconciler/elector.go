package reconciler

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"settle/ledger"
)

// Elector runs one cluster-wide duty (the auditor's walk, retention, daily
// digests) on one replica at a time: it asks the store for the duty's
// leader lease, runs Work while it holds the lease, renews it on a
// jittered tick, and cancels Work as soon as a renewal fails or finds the
// lease taken. Every replica runs an Elector per duty; per-operation loops
// (executor, sweeper, reconciler, inbox, notifier) need none, since their
// claims already divide the work.
//
// The lease saves repeated work, not correctness: a replica that pauses
// longer than the lease (a GC stop, a frozen VM) may still be running Work
// for a moment after another has taken over, so every duty must be safe to
// run twice at once, as the auditor is (its findings are recorded once).
type Elector struct {
	Leases ledger.LeaderStore
	Duty   string // the lease's name: "auditor", "retention", …
	Holder string // this replica's id, unique in the cluster
	// Work is the duty. It runs while this replica leads and should return
	// when its context is cancelled; if it returns earlier it is started
	// again at the next renewal, while the lease still holds.
	Work func(ctx context.Context) error
	Log  *slog.Logger
	// Leading, when set, is 1 while this replica runs Work and 0 otherwise.
	Leading prometheus.Gauge
	// TTL is how long the lease lasts unless renewed (default 30s): how
	// long the duty stands still after a replica dies without releasing.
	TTL time.Duration
	// Every is how often the lease is renewed, or asked for by a replica
	// that does not hold it (jittered, at most Every apart); one attempt
	// may take Every/2 of real time. At most, and by default, TTL/3. A
	// leader whose renewals fail stops Work before its lease can expire.
	Every time.Duration
	// Clock is what the elector times its attempts and its safety margin
	// by; nil is the wall clock. The lease's expiry is the store's time.
	Clock Clock
}

// Run takes part in the election until ctx is cancelled, then stops Work
// and releases the lease so that another replica takes over at its next
// attempt instead of after the lease expires.
func (e *Elector) Run(ctx context.Context) error {
	def(&e.TTL, 30*time.Second)
	if e.Every <= 0 || e.Every > e.TTL/3 {
		e.Every = e.TTL / 3
	}
	e.setLeading(false)
	clock := clockOr(e.Clock)
	var (
		cancel    context.CancelFunc
		done      chan struct{} // closed when Work returns; nil while not running
		confirmed time.Time     // when the last successful attempt began
	)
	stop := func(why string) {
		if done == nil {
			return
		}
		// No longer the leader from here on, whatever Work still finishes.
		e.setLeading(false)
		cancel()
		<-done
		done = nil
		e.Log.Info("duty stopped", "duty", e.Duty, "reason", why)
	}
	start := func() {
		wctx, c := context.WithCancel(ctx)
		cancel, done = c, make(chan struct{})
		e.setLeading(true)
		e.Log.Info("leading; duty started", "duty", e.Duty, "holder", e.Holder)
		go func(done chan struct{}) {
			defer close(done)
			if err := e.Work(wctx); err != nil && wctx.Err() == nil {
				e.Log.Error("duty failed; restarting while this replica leads", "duty", e.Duty, "err", err)
			}
		}(done)
	}
	p := newPause(e.Every)
	p.clock = clock
	for ctx.Err() == nil {
		began := clock.Now()
		// An attempt may take half a tick: a leader cut off from the
		// database must notice, and stop, before its lease can expire.
		actx, acancel := context.WithTimeout(ctx, e.Every/2)
		leads, err := e.Leases.AcquireLeader(actx, e.Duty, e.Holder, e.TTL)
		acancel()
		switch {
		case ctx.Err() != nil:
		case err != nil:
			e.Log.Warn("lease attempt failed", "duty", e.Duty, "err", err)
			if done == nil {
				p.fail(ctx)
				continue
			}
			// Keep the duty only while the lease last confirmed surely
			// outlives the next attempt; after that another replica may
			// hold it. From the start of the last good attempt: at most
			// Every/2 for it, Every to the next, Every/2 for that one.
			safe := confirmed.Add(e.TTL - 2*e.Every)
			now := clock.Now()
			if !now.Before(safe) {
				stop("the lease could not be renewed")
				p.fail(ctx)
				continue
			}
			sleep(ctx, clock, min(jitter(e.Every), safe.Sub(now)))
			continue
		case leads:
			confirmed = began
			if done == nil {
				start()
			}
		default:
			stop("another replica holds the lease")
		}
		p.ok()
		var ended <-chan struct{}
		if done != nil {
			ended = done
		}
		tick, stopTick := clock.NewTimer(jitter(e.Every * 5 / 6)) // at most Every
		select {
		case <-ctx.Done():
		case <-tick:
		case <-ended:
			// Work returned by itself; it is started again after the next
			// renewal, not at once, so a duty that fails at once does not
			// spin.
			done = nil
			cancel()
			e.setLeading(false)
			select {
			case <-ctx.Done():
			case <-tick:
			}
		}
		stopTick()
	}
	stop("shutting down")
	// The caller's context is done; the release gets a moment of its own.
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer rcancel()
	if err := e.Leases.ReleaseLeader(rctx, e.Duty, e.Holder); err != nil {
		e.Log.Warn("lease release failed; another replica takes over when it expires",
			"duty", e.Duty, "err", err)
	}
	return nil
}

func (e *Elector) setLeading(on bool) {
	if e.Leading == nil {
		return
	}
	if on {
		e.Leading.Set(1)
	} else {
		e.Leading.Set(0)
	}
}

// NewLeaderGauge registers settle_leader, by duty, on reg (nil: not
// exported) for the Electors' Leading gauges.
func NewLeaderGauge(reg prometheus.Registerer) *prometheus.GaugeVec {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "settle_leader",
		Help: "1 while this replica holds the leader lease of a cluster-wide duty and runs it, 0 otherwise, by duty.",
	}, []string{"duty"})
	if reg != nil {
		reg.MustRegister(g)
	}
	return g
}
