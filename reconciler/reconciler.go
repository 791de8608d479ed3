package reconciler

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"settle/ledger"
	"settle/target"
)

// Reconciler resolves UNKNOWN operations by asking the authoritative system,
// acting by the target's capability classes (paper, "Reconciling an Unknown
// Outcome"): A, same key and identical bytes inside the retention window
// (counted from the first claim, with the timeout and a margin to spare);
// B, lookup by settle's reference; C, conditional resend of an update; D,
// escalate at once. "Not found" becomes FAILED_TERMINAL only when all three
// absence conditions hold, an answer to a replay or resend never does, and
// at its deadline an unresolved operation is escalated to its owning team.
type Reconciler struct {
	Store     ledger.Store
	Contracts Contracts
	Client    *target.Client
	Log       *slog.Logger
	Now       func() time.Time // nil: time.Now; must agree with the store's clock

	Batch      int           // operations leased at once (default 50)
	Workers    int           // concurrent resolutions (default 8), at most a target's reconcile.concurrency on one target
	Lease      time.Duration // reconciler lease (default 60s)
	Tick       time.Duration // pause when nothing is due (default 500ms)
	MinBackoff time.Duration // first delay after an inconclusive round (default 1s)
	MaxBackoff time.Duration // longest delay (default 5m)
}

func (r *Reconciler) defaults() {
	def(&r.Batch, 50)
	def(&r.Workers, 8)
	def(&r.Lease, 60*time.Second)
	def(&r.Tick, 500*time.Millisecond)
	def(&r.MinBackoff, time.Second)
	def(&r.MaxBackoff, 5*time.Minute)
	if r.Now == nil {
		r.Now = time.Now
	}
}

// Run reconciles until ctx is cancelled; resolutions in progress finish and
// are recorded first.
//
// There is no batch to wait for: the loop leases as many operations as it
// has free workers, and leaves out the targets whose reconcile concurrency
// (target.Contract.ReconcileConcurrency) is used up, so a target that hangs
// holds only its own slots: its due operations stay due and untouched for
// another replica or a later round, and the other targets' go on. A lease
// never returns more of one target than it has free slots (slots.room), so
// every leased operation starts at once and its lease covers only its own
// lookup or replay.
func (r *Reconciler) Run(ctx context.Context) error {
	r.defaults()
	rec := newRecorder(r.Store, r.Log)
	defer rec.close()
	var wg sync.WaitGroup
	defer wg.Wait() // before the recorder closes
	s := r.slots()
	p := newPause(r.Tick)
	for ctx.Err() == nil {
		n, full := s.room()
		if n = min(n, r.Batch); n == 0 {
			s.wait(ctx)
			continue
		}
		ops, err := r.Store.LeaseUnknown(ctx, n, r.Lease, full...)
		if err != nil {
			if ctx.Err() == nil {
				r.Log.Error("lease failed", "err", err)
			}
			p.fail(ctx)
			continue
		}
		p.ok()
		for _, op := range ops {
			s.take(op.Target)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer s.release(op.Target)
				rec.add(r.Resolve(ctx, op))
			}()
		}
		if len(ops) < n {
			p.idleOr(ctx, s.woken())
		}
	}
	return nil
}

// slots are the reconciler's Workers, at most a target's reconcile
// concurrency of them on one target. A target without a contract takes no
// network call (its operations are escalated), so it is bounded only by
// Workers.
func (r *Reconciler) slots() *slots {
	limit := func(name string) int {
		if c, ok := r.Contracts.Get(name); ok {
			return c.ReconcileConcurrency()
		}
		return r.Workers
	}
	floor := 1 // without the list of targets, one at a time is the only safe claim
	if cs, ok := r.Contracts.(ContractSet); ok {
		floor = r.Workers
		for _, name := range cs.Names() {
			floor = min(floor, limit(name))
		}
	}
	return newSlots(r.Workers, floor, limit)
}

// Resolve decides one leased UNKNOWN operation.
func (r *Reconciler) Resolve(ctx context.Context, op ledger.Operation) ledger.Outcome {
	r.defaults()
	now := r.Now()
	c, ok := r.Contracts.Get(op.Target)
	if !ok {
		v := verdict{to: ledger.Escalated, reason: "no contract for target " + op.Target}
		return v.outcome(op, ledger.Unknown, ledger.ActorReconciler)
	}
	var (
		v      verdict
		sentAt *time.Time
	)
	if op.Reason == ledger.ReasonReplayAuthorised {
		v, sentAt = r.authorisedReplay(ctx, c, op, now)
	} else {
		v, sentAt = r.ask(ctx, c, op, now)
	}
	v = recordable(v, op, ledger.Unknown, ledger.ActorReconciler)
	if v.to == ledger.Unknown && op.Deadline != nil && !now.Before(*op.Deadline) {
		v.to = ledger.Escalated
		v.reason = fmt.Sprintf("unresolved past its deadline (%s); escalated to %s <%s>; last finding: %s",
			op.Deadline.Format(time.RFC3339), c.Owner.Team, c.Owner.EscalationContact, v.reason)
	}
	out := v.outcome(op, ledger.Unknown, ledger.ActorReconciler)
	out.SentAt = sentAt
	if out.To == ledger.Unknown {
		next := r.nextAt(op, now, v.soon)
		out.NextAt = &next
	}
	r.Log.Info("resolved", "operation_id", op.ID, "tenant", op.Tenant, "target", op.Target,
		"state", out.To, "reason", out.Reason)
	return out
}

// ask performs the one action the contract allows and returns its verdict,
// and the send time when the action re-sent the request.
func (r *Reconciler) ask(ctx context.Context, c *target.Contract, op ledger.Operation, now time.Time) (verdict, *time.Time) {
	canLookup := c.HasLookup() && (!c.Lookup.NeedsRemoteRef() || op.RemoteRef != "")
	if c.CanReplay(now, op.RetryWindowEnd) {
		a := r.Client.Create(ctx, c, op.Tenant, op.Payload, op.RemoteKey, "")
		return afterLaterSend(c, laterSendVerdict(c, op, a, "same-key replay"), canLookup), sentAt(a, now)
	}
	if canLookup {
		return r.lookup(ctx, c, op, now), nil
	}
	if version, ok := c.ExpectedVersion(op.Payload); ok && c.HasConditional() {
		a := r.Client.Create(ctx, c, op.Tenant, op.Payload, op.RemoteKey, version)
		v := laterSendVerdict(c, op, a, "conditional resend")
		if a.Status == 412 {
			v = verdict{to: ledger.Escalated, evidence: v.evidence,
				reason: "the precondition failed: the resource changed, possibly by the first attempt; confirm by hand"}
		}
		return afterLaterSend(c, v, false), sentAt(a, now)
	}
	return verdict{to: ledger.Escalated, evidence: map[string]any{"classes": c.Classes()},
		reason: fmt.Sprintf("the target offers no way to confirm the outcome; escalated to %s", c.Owner.Team)}, nil
}

// authorisedReplay performs the one same-key replay two owners approved
// (ledger.KindReplay). Whatever this round records replaces the marker
// reason, so the replay is not repeated; an answer that settles nothing
// goes back to the owners (ESCALATED) instead of into the reconciler's
// loop, and a window that closed since the approval is never replayed into.
func (r *Reconciler) authorisedReplay(ctx context.Context, c *target.Contract, op ledger.Operation, now time.Time) (verdict, *time.Time) {
	if !c.CanReplay(now, op.RetryWindowEnd) {
		return verdict{to: ledger.Escalated, evidence: map[string]any{"via": "authorised replay"},
			reason: "the authorised same-key replay was not sent: its window closed before the reconciler reached it"}, nil
	}
	a := r.Client.Create(ctx, c, op.Tenant, op.Payload, op.RemoteKey, "")
	v := laterSendVerdict(c, op, a, "same-key replay")
	v.evidence["authorised"] = true
	if v.to == ledger.Unknown {
		v.to, v.endReplay = ledger.Escalated, false
		v.reason += fmt.Sprintf("; the authorised replay settled nothing; escalated again to %s", c.Owner.Team)
	}
	return v, sentAt(a, now)
}

// sentAt is the send time to record for a later send: now, unless nothing
// was sent (a missing tenant parameter or credential), which must not
// count as a send in the absence rules.
func sentAt(a target.Attempt, now time.Time) *time.Time {
	if !a.Sent() {
		return nil
	}
	return &now
}

// afterLaterSend decides what follows a later send answered "this request
// did nothing", or answered with the target's saved answer to the first
// send: sending again would most likely earn the same answer and prove no
// more, so the replay window ends and the operation is looked up next, or,
// when the target offers no lookup, escalated at once.
func afterLaterSend(c *target.Contract, v verdict, canLookup bool) verdict {
	if !v.noMoreReplays || v.to != ledger.Unknown {
		return v
	}
	if canLookup {
		v.endReplay, v.soon = true, true
		v.reason += "; no more replays: it will be looked up"
		return v
	}
	v.to = ledger.Escalated
	v.reason += fmt.Sprintf("; the target offers no lookup to confirm it; escalated to %s <%s>",
		c.Owner.Team, c.Owner.EscalationContact)
	return v
}

// lookup asks the target for objects carrying settle's reference.
func (r *Reconciler) lookup(ctx context.Context, c *target.Contract, op ledger.Operation, now time.Time) verdict {
	a := r.Client.Lookup(ctx, c, op.Tenant, op.RemoteKey, op.RemoteRef)
	ev := map[string]any{"via": "lookup", "status": a.Status}
	if !a.Sent() {
		delete(ev, "status")
		return notSent(a, ev)
	}
	if !a.Answered() {
		ev["failure"] = a.Failure
		return unknown("lookup got no response: "+a.Failure, ev)
	}
	if a.Status != 200 {
		return unknown(fmt.Sprintf("lookup answered %d", a.Status), ev)
	}
	results, err := c.Results(a.Body)
	if err != nil {
		return unknown("lookup answer unreadable", ev)
	}
	ev["results"] = len(results)
	switch len(results) {
	case 0:
		meaningful, conds := c.AbsenceMeaningful(AbsenceTimes(c, op, now))
		ev["absence"] = conds
		if meaningful {
			return verdict{to: ledger.FailedTerminal, evidence: ev,
				reason: "not found, and all three documented absence conditions hold"}
		}
		return unknown("not found yet; absence alone proves nothing", ev)
	case 1:
		return objectVerdict(c, op, results[0], ev)
	}
	ids := make([]string, 0, len(results))
	for _, res := range results {
		id, _ := c.RemoteID(res)
		ids = append(ids, shownID(id))
	}
	ev["remote_ids"] = ids
	return verdict{to: ledger.Escalated, evidence: ev,
		reason: fmt.Sprintf("the target holds %d objects for one reference: possible duplicate", len(results))}
}

// nextAt is when the reconciler looks at the operation again: after the
// backoff, but never past its deadline, so that an operation still
// unresolved then is escalated on time rather than a backoff later.
func (r *Reconciler) nextAt(op ledger.Operation, now time.Time, soon bool) time.Time {
	next := now.Add(r.delay(op, now, soon))
	if op.Deadline != nil && next.After(*op.Deadline) {
		next = *op.Deadline // now is before it, or this round would have escalated
	}
	return next
}

// delay is the jittered backoff before the next round. It is half the time
// since the operation was last sent (or created), between MinBackoff and
// MaxBackoff: each round waits longer than the last, so the delays grow
// exponentially without storing a round counter.
func (r *Reconciler) delay(op ledger.Operation, now time.Time, soon bool) time.Duration {
	if soon {
		return jitter(r.MinBackoff)
	}
	since := op.CreatedAt
	if op.LastSentAt != nil {
		since = *op.LastSentAt
	}
	d := now.Sub(since) / 2
	d = max(r.MinBackoff, min(d, r.MaxBackoff))
	return jitter(d)
}

// AbsenceTimes are the moments the absence rules weigh for op, looked up
// at now.
func AbsenceTimes(c *target.Contract, op ledger.Operation, now time.Time) target.OperationTimes {
	times := target.OperationTimes{LookupAt: now, RetryWindowEnd: op.RetryWindowEnd}
	if op.LastSentAt != nil {
		// The request may have reached the target as late as the client's
		// timeout after it was sent.
		times.LastSent = op.LastSentAt.Add(c.Timeout)
	}
	if op.Deadline != nil {
		times.Deadline = *op.Deadline
	}
	return times
}
