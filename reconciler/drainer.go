package reconciler

import (
	"context"
	"log/slog"
	"time"

	"settle/ledger"
)

// Drainer counts in this replica what processes serving no metrics (the
// CLI commands, whose observer is a ledger.Recorder) committed: it drains
// the stored observations in bounded batches and tells its Observer, the
// one the store tells of this replica's own commits. Each row is drained
// by one replica, once, so the sum over replicas counts every transition
// once. Safe to run in every replica.
type Drainer struct {
	Store    ledger.ObservationStore
	Observer ledger.Observer
	Log      *slog.Logger
	Tick     time.Duration // pause when nothing is waiting; default 2s
	Batch    int           // observations per drain; default 500
}

// Run drains until ctx is cancelled.
func (d *Drainer) Run(ctx context.Context) error {
	def(&d.Tick, 2*time.Second)
	def(&d.Batch, 500)
	p := newPause(d.Tick)
	for ctx.Err() == nil {
		c, err := d.Store.DrainObservations(ctx, d.Batch)
		if err != nil {
			if ctx.Err() == nil {
				d.Log.Error("draining the observations of other processes failed", "err", err)
				p.fail(ctx)
			}
			continue
		}
		// Drained is deleted: tell the observer even while shutting down.
		c.Tell(context.WithoutCancel(ctx), d.Observer)
		p.ok()
		if c.Len() < d.Batch {
			p.idle(ctx)
		}
	}
	return nil
}
