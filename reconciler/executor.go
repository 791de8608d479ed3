package reconciler

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"settle/ledger"
	"settle/target"
)

// Executor claims PREPARED operations in batches, sends each exactly once
// with its stored bytes and key, and records the verdicts with their fences.
// It never retries: a send whose outcome is unclear becomes UNKNOWN and is
// the reconciler's to resolve.
//
// Claimed operations wait in a small local queue until a worker is free,
// so that a claim takes a whole batch rather than one operation per freed
// worker. Time in the queue counts against the claim's lease: a worker
// starts a send only while the operation still has its lease less its
// queue allowance (QueueWait) left: it may wait at most that allowance
// after its claim returned, on this process's monotonic clock (so a
// database clock ahead or behind cannot stretch it; the claim's own round
// trip is spent from the lease as it always was). An operation that waited longer is not sent: it stays
// IN_FLIGHT until its lease runs out, the sweeper makes it UNKNOWN and the
// reconciler asks the target before anything is sent again. That wastes a
// reconciliation; sending it could let the send land after the lease ran
// out, while another path acts on the operation, which is what settle
// exists to prevent. To keep such operations rare, the queue holds only as
// many operations as the workers can start within half the allowance at
// the measured send time (none while sends are slow or not yet measured).
type Executor struct {
	Store     ledger.Store
	Contracts ContractSet
	Client    *target.Client
	Log       *slog.Logger

	Batch   int // most operations claimed at once (default 100)
	Workers int // concurrent sends (default 16)
	// Queue is the most claimed operations that may wait for a worker
	// (default 2×Workers). A claim takes up to Batch operations, as many as
	// the free workers and the queue's free room allow, once the queue is
	// down to one round of work. Two rounds make claims several times
	// larger than one per freed worker while bounding an operation's wait
	// to about two sends; and they are few to lose: on shutdown, operations
	// still queued are not sent and expire into UNKNOWN (nothing returns to
	// PREPARED), each costing the reconciler one question to its target.
	// From about 50 workers up, claims are full batches of 100.
	Queue int
	// QueueWait is how much of its claim lease an operation may spend in
	// the queue and still be sent (default target.LeaseMargin/2, and never
	// more than a quarter of the lease): a queued send starts with at least
	// its target's timeout plus the rest of the lease margin left. The claim
	// lease itself is unchanged, so a send cut off by a crash becomes
	// UNKNOWN, and can be replayed inside a short retention window, as soon
	// as before.
	QueueWait time.Duration
	// Lease, when positive, caps every claim lease. By default each claim
	// holds its operation for its target's Contract.Lease (timeout +
	// target.LeaseMargin); a cap below a target's timeout makes a slow send
	// expire into UNKNOWN while it may still answer (its verdict is then
	// discarded and the reconciler resolves it).
	Lease time.Duration
	Idle  time.Duration // pause when nothing is ready (default 200ms)
	Grace time.Duration // how long shutdown waits for sends in progress (default 10s)
}

func (e *Executor) defaults() {
	def(&e.Batch, 100)
	def(&e.Workers, 16)
	def(&e.Queue, 2*e.Workers)
	def(&e.QueueWait, target.LeaseMargin/2)
	def(&e.Idle, 200*time.Millisecond)
	def(&e.Grace, 10*time.Second)
}

// queueWait is the queue allowance of a claim leased for lease.
func (e *Executor) queueWait(lease time.Duration) time.Duration {
	return min(e.QueueWait, lease/4)
}

// leases returns the claim lease of each target with a contract, and the
// lease of any other target, whose operations are escalated unsent.
func (e *Executor) leases() (time.Duration, []ledger.TargetLease) {
	capped := func(d time.Duration) time.Duration {
		if e.Lease > 0 {
			return min(d, e.Lease)
		}
		return d
	}
	var byTarget []ledger.TargetLease
	for _, name := range e.Contracts.Names() {
		if c, ok := e.Contracts.Get(name); ok {
			byTarget = append(byTarget, ledger.TargetLease{Target: name, Lease: capped(c.Lease())})
		}
	}
	return capped(target.LeaseMargin), byTarget
}

func def[T int | time.Duration](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}

// Run sends until ctx is cancelled. On cancellation it stops claiming and
// sends nothing more from its queue (those operations keep their leases and
// expire into UNKNOWN), waits up to Grace for sends in progress and records
// their verdicts; sends still running after that are abandoned unrecorded,
// and their leases expire into UNKNOWN.
func (e *Executor) Run(ctx context.Context) error {
	e.defaults()
	sendCtx, abandon := context.WithCancel(context.WithoutCancel(ctx))
	defer abandon()
	rec := newRecorder(e.Store, e.Log)
	defer rec.close()

	lease, byTarget := e.leases()
	waits := map[string]time.Duration{}
	shortest := e.queueWait(lease)
	for _, t := range byTarget {
		waits[t.Target] = e.queueWait(t.Lease)
		shortest = min(shortest, waits[t.Target])
	}
	waitOf := func(name string) time.Duration {
		if w, ok := waits[name]; ok {
			return w
		}
		return e.queueWait(lease)
	}
	q := newSendQueue(e.Workers, e.Queue, shortest)
	var (
		wg     sync.WaitGroup
		unsent atomic.Int64
		pause  = newPause(e.Idle)
	)
	for range e.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range q.ops {
				e.work(ctx, sendCtx, q, rec, c, &unsent)
			}
		}()
	}
	for ctx.Err() == nil {
		n := q.want(e.Batch)
		if n == 0 {
			q.await(ctx)
			continue
		}
		ops, err := e.Store.ClaimBatch(ctx, n, lease, byTarget...)
		if err != nil {
			if ctx.Err() == nil {
				e.Log.Error("claim failed", "err", err)
			}
			pause.fail(ctx)
			continue
		}
		pause.ok()
		claimed := time.Now()
		for _, op := range ops {
			q.ops <- queued{op: op, sendBy: claimed.Add(waitOf(op.Target))}
		}
		if len(ops) == 0 {
			pause.idle(ctx)
		}
	}
	close(q.ops)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(e.Grace):
		e.Log.Warn("sends still running after the grace period are left to lease expiry")
		abandon()
		<-done
	}
	if n := unsent.Load(); n > 0 {
		e.Log.Info("claimed operations left unsent at shutdown; their leases expire into UNKNOWN", "operations", n)
	}
	return nil
}

// work sends one queued operation and hands its verdict to the recorder,
// unless the executor is stopping or the operation waited past its queue
// allowance: then it sends nothing and leaves the operation to lease expiry.
func (e *Executor) work(ctx, sendCtx context.Context, q *sendQueue, rec *recorder, c queued, unsent *atomic.Int64) {
	q.busy.Add(1)
	q.ring() // the queue is one shorter
	defer q.ring()
	defer q.busy.Add(-1)
	if ctx.Err() != nil {
		unsent.Add(1)
		return
	}
	if late := time.Since(c.sendBy); late > 0 {
		e.Log.Warn("not sent: queued past its lease allowance; left to expire into UNKNOWN",
			"operation_id", c.op.ID, "tenant", c.op.Tenant, "target", c.op.Target, "late", late)
		return
	}
	start := time.Now()
	out := e.Send(sendCtx, c.op)
	q.observe(time.Since(start))
	if sendCtx.Err() == nil {
		rec.add(out)
	}
}

// Send performs the one send of an operation the caller claimed (Claim or
// ClaimBatch) and returns its verdict, unrecorded: the caller records it
// with its fence, or, as `settle drill` does to emulate a worker killed
// between the two steps, leaves it to lease expiry. Run uses it for every
// claimed operation.
func (e *Executor) Send(ctx context.Context, op ledger.Operation) ledger.Outcome {
	c, ok := e.Contracts.Get(op.Target)
	if !ok {
		v := verdict{to: ledger.Escalated, reason: "no contract for target " + op.Target + "; nothing was sent"}
		return v.outcome(op, ledger.InFlight, ledger.ActorExecutor)
	}
	version, _ := c.ExpectedVersion(op.Payload)
	a := e.Client.Create(ctx, c, op.Tenant, op.Payload, op.RemoteKey, version)
	out := recordable(sendVerdict(c, op, a), op, ledger.InFlight, ledger.ActorExecutor).
		outcome(op, ledger.InFlight, ledger.ActorExecutor)
	if !a.Sent() {
		// The reason names parameters and variables, never their values.
		e.Log.Warn("not sent; escalated", "operation_id", op.ID, "tenant", op.Tenant, "target", op.Target,
			"reason", a.NotSent, "owner", c.Owner.Team)
		return out
	}
	e.Log.Info("sent", "operation_id", op.ID, "tenant", op.Tenant, "target", op.Target,
		"status", a.Status, "failure", a.Failure, "replayed", a.Replayed, "state", out.To)
	return out
}
