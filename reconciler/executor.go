package reconciler

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"settle/ledger"
	"settle/target"
)

// Executor claims PREPARED operations in batches, sends each exactly once
// with its stored bytes and key, and records the verdicts with their fences.
// It never retries: a send whose outcome is unclear becomes UNKNOWN and is
// the reconciler's to resolve.
type Executor struct {
	Store     ledger.Store
	Contracts ContractSet
	Client    *target.Client
	Log       *slog.Logger

	Batch   int // most operations claimed at once (default 100)
	Workers int // concurrent sends (default 16)
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
	def(&e.Idle, 200*time.Millisecond)
	def(&e.Grace, 10*time.Second)
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

// Run sends until ctx is cancelled. On cancellation it stops claiming,
// waits up to Grace for sends in progress and records their verdicts;
// sends still running after that are abandoned unrecorded, and their leases
// expire into UNKNOWN.
func (e *Executor) Run(ctx context.Context) error {
	e.defaults()
	sendCtx, abandon := context.WithCancel(context.WithoutCancel(ctx))
	defer abandon()
	rec := newRecorder(e.Store, e.Log)
	defer rec.close()

	var (
		wg              sync.WaitGroup
		slots           = make(chan struct{}, e.Workers)
		pause           = newPause(e.Idle)
		lease, byTarget = e.leases()
	)
	for ctx.Err() == nil {
		free := e.Workers - len(slots)
		if free == 0 {
			select { // wait for a slot
			case slots <- struct{}{}:
				<-slots
			case <-ctx.Done():
			}
			continue
		}
		ops, err := e.Store.ClaimBatch(ctx, min(free, e.Batch), lease, byTarget...)
		if err != nil {
			if ctx.Err() == nil {
				e.Log.Error("claim failed", "err", err)
			}
			pause.fail(ctx)
			continue
		}
		pause.ok()
		for _, op := range ops {
			slots <- struct{}{}
			wg.Add(1)
			go func(op ledger.Operation) {
				defer wg.Done()
				defer func() { <-slots }()
				out := e.Send(sendCtx, op)
				if sendCtx.Err() == nil {
					rec.add(out)
				}
			}(op)
		}
		if len(ops) == 0 {
			pause.idle(ctx)
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(e.Grace):
		e.Log.Warn("sends still running after the grace period are left to lease expiry")
		abandon()
		<-done
	}
	return nil
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
