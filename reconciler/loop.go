package reconciler

import (
	"context"
	"fmt"
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

// idleOr is idle, cut short when wake receives.
func (p *pause) idleOr(ctx context.Context, wake <-chan struct{}) {
	ch, stop := clockOr(p.clock).NewTimer(jitter(p.idleFor))
	defer stop()
	select {
	case <-ch:
	case <-wake:
	case <-ctx.Done():
	}
}
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
		// Every row failed (a store records a batch row by row before it
		// gives up on it): the database is down, or refused each of them.
		r.log.Error("record failed", "operations", len(batch), "err", err)
		errs = make([]error, len(batch))
		for i := range errs {
			errs[i] = err
		}
	}
	for i, e := range errs {
		switch {
		case e == nil:
		case ledger.ErrorCode(e) == ledger.EInternal:
			r.unrecorded(ctx, batch[i], e)
		default:
			r.log.Warn("verdict discarded", "operation_id", batch[i].OperationID,
				"code", ledger.ErrorCode(e), "reason", ledger.ErrorMessage(e))
		}
	}
}

// unrecordedRetry is how soon an operation whose verdict the database
// refused is asked again (never later than its deadline).
const unrecordedRetry = time.Minute

// unrecorded handles an outcome the database refused on its own (its
// neighbours in the batch were recorded). The error names the constraint,
// never the value. Left alone, the operation would be asked again at every
// lease expiry, earn the same refused verdict and never reach its
// deadline's escalation; so settle records instead what it knows: UNKNOWN,
// asked again after unrecordedRetry, or, once past the deadline,
// ESCALATED — whatever the verdict was.
func (r *recorder) unrecorded(ctx context.Context, o ledger.Outcome, err error) {
	op, gerr := r.store.Get(ctx, o.Tenant, o.OperationID)
	if gerr != nil {
		return // the database does not answer: the lease expires into UNKNOWN
	}
	r.log.Error("verdict not recorded: the database refused it", "operation_id", o.OperationID,
		"tenant", o.Tenant, "verdict", o.To, "err", err)
	now := time.Now()
	f := ledger.Outcome{Tenant: o.Tenant, OperationID: o.OperationID, Fence: o.Fence, From: o.From, To: ledger.Unknown,
		Actor: o.Actor, Evidence: map[string]any{"unrecordable": "the database refused the verdict", "verdict": string(o.To)},
		Reason: fmt.Sprintf("the verdict (%s) could not be recorded: the database refused it; it is asked again", o.To)}
	if op.Deadline != nil && !now.Before(*op.Deadline) {
		f.To = ledger.Escalated
		f.Reason = fmt.Sprintf("unresolved past its deadline (%s): the verdict (%s) could not be recorded, the database refused it; escalated",
			op.Deadline.Format(time.RFC3339), o.To)
	} else {
		next := now.Add(unrecordedRetry)
		if op.Deadline != nil && next.After(*op.Deadline) {
			next = *op.Deadline
		}
		f.NextAt = &next
	}
	if _, err := r.store.Record(ctx, f); err != nil {
		r.log.Error("recording the refusal failed too; its lease will expire into UNKNOWN", "operation_id", o.OperationID,
			"tenant", o.Tenant, "code", ledger.ErrorCode(err), "reason", ledger.ErrorMessage(err))
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
