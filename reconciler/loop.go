package reconciler

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v5"

	"settle/ledger"
)

// pause paces a loop: a jittered idle tick when there is nothing to do and
// an exponential, jittered backoff after errors.
type pause struct {
	idleFor time.Duration
	errs    *backoff.ExponentialBackOff
	clock   Clock // what it sleeps on; nil is the wall clock
}

func newPause(idle time.Duration) *pause {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval, b.MaxInterval = idle, 30*time.Second
	return &pause{idleFor: idle, errs: b}
}

func (p *pause) idle(ctx context.Context) { sleep(ctx, p.clock, jitter(p.idleFor)) }
func (p *pause) fail(ctx context.Context) { sleep(ctx, p.clock, p.errs.NextBackOff()) }
func (p *pause) ok()                      { p.errs.Reset() }

// jitter spreads d by ±20% so replicas do not tick in step.
func jitter(d time.Duration) time.Duration {
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

// recorder collects verdicts from concurrent senders and writes them with
// RecordBatch, many per statement. A verdict whose fence no longer holds is
// discarded by the store and logged here.
type recorder struct {
	store ledger.Store
	log   *slog.Logger // the loop's, carrying its component
	in    chan ledger.Outcome
	done  chan struct{}
}

func newRecorder(store ledger.Store, log *slog.Logger) *recorder {
	r := &recorder{store: store, log: log, in: make(chan ledger.Outcome, 256), done: make(chan struct{})}
	go r.run()
	return r
}

func (r *recorder) add(o ledger.Outcome) { r.in <- o }

// close flushes what is pending and stops.
func (r *recorder) close() {
	close(r.in)
	<-r.done
}

func (r *recorder) run() {
	defer close(r.done)
	const most = 100
	batch := make([]ledger.Outcome, 0, most)
	for o := range r.in {
		batch = append(batch[:0], o)
		// Take whatever else is already waiting, without waiting for more.
	more:
		for len(batch) < most {
			select {
			case o, ok := <-r.in:
				if !ok {
					break more
				}
				batch = append(batch, o)
			default:
				break more
			}
		}
		r.flush(batch)
	}
}

func (r *recorder) flush(batch []ledger.Outcome) {
	// Recording must finish even while the process shuts down: a lost
	// verdict costs a reconciliation round, not correctness.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	errs, err := r.store.RecordBatch(ctx, batch)
	if err != nil {
		r.log.Error("record failed; leases will expire into UNKNOWN", "operations", len(batch), "err", err)
		return
	}
	for i, e := range errs {
		if e != nil {
			r.log.Warn("verdict discarded", "operation_id", batch[i].OperationID,
				"code", ledger.ErrorCode(e), "reason", ledger.ErrorMessage(e))
		}
	}
}

// Sweeper moves expired IN_FLIGHT leases to UNKNOWN on a short tick. It is
// safe to run in every replica.
type Sweeper struct {
	Store ledger.Store
	Log   *slog.Logger
	Tick  time.Duration // default 1s
}

// Run sweeps until ctx is cancelled.
func (s *Sweeper) Run(ctx context.Context) error {
	def(&s.Tick, time.Second)
	p := newPause(s.Tick)
	for ctx.Err() == nil {
		n, err := s.Store.SweepExpired(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			s.Log.Error("sweep failed", "err", err)
			p.fail(ctx)
			continue
		case n > 0:
			s.Log.Warn("expired leases moved to UNKNOWN", "operations", n)
		}
		p.ok()
		p.idle(ctx)
	}
	return nil
}

// Run starts every non-nil loop and returns when ctx is cancelled and all
// of them have stopped.
func Run(ctx context.Context, loops ...interface{ Run(context.Context) error }) {
	var wg sync.WaitGroup
	for _, l := range loops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = l.Run(ctx)
		}()
	}
	wg.Wait()
}
