package reconciler

import (
	"context"
	"log/slog"
	"time"

	"settle/ledger"
)

// Retention applies the deployment's retention policy (redact payloads,
// delete final operations, purge reviewed items) on a long, jittered tick.
// It is cluster-wide work: every pass is safe to run in several replicas
// at once (each batch skips rows another holds, and a second pass finds
// nothing), but one replica at a time is enough, so it is a value with Pass
// and Run that a leader lease can wrap.
type Retention struct {
	Store  ledger.RetentionStore
	Policy ledger.RetentionPolicy
	Log    *slog.Logger
	Clock  Clock         // the time of the cutoffs and the ticks; nil is the wall clock
	Tick   time.Duration // between passes; default 1h
	Batch  int           // rows per transaction; default 500
}

// RetentionReport is what one pass did.
type RetentionReport struct {
	Cutoffs ledger.RetentionCutoffs
	Counts  ledger.RetentionCounts
	Took    time.Duration
}

// Pass applies the policy once, to now, in bounded batches. On an error
// the report says what was done before it.
func (r *Retention) Pass(ctx context.Context) (RetentionReport, error) {
	clock := clockOr(r.Clock)
	def(&r.Batch, 500)
	start := clock.Now()
	rep := RetentionReport{Cutoffs: r.Policy.Cutoffs(start)}
	counts, err := ledger.ApplyRetention(ctx, r.Store, rep.Cutoffs, r.Batch)
	rep.Counts, rep.Took = counts, clock.Now().Sub(start)
	return rep, err
}

// Run applies the policy every Tick until ctx is cancelled; a policy that
// removes nothing makes it return at once.
func (r *Retention) Run(ctx context.Context) error {
	if !r.Policy.Enabled() {
		return nil
	}
	def(&r.Tick, time.Hour)
	p := newPause(r.Tick)
	p.clock = r.Clock
	for ctx.Err() == nil {
		rep, err := r.Pass(ctx)
		args := []any{"took", rep.Took.Round(time.Millisecond)}
		for _, k := range rep.Counts.Kinds() {
			if k.Count > 0 {
				args = append(args, k.Kind, k.Count)
			}
		}
		switch {
		case err != nil && ctx.Err() != nil:
			// Shutting down: what the pass did is committed; say so.
			if rep.Counts.Total() > 0 {
				r.Log.Info("pass cut short by shutdown", args...)
			}
			return nil
		case err != nil:
			r.Log.Error("pass failed", append(args, "err", err)...)
			p.fail(ctx)
			continue
		case rep.Counts.Total() > 0:
			r.Log.Info("pass done", args...)
		}
		p.ok()
		p.idle(ctx)
	}
	return nil
}
