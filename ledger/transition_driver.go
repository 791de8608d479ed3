package ledger

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// TransitionDriver is the SQL of the hot path: the executor's claims, the
// recorded outcomes, the sweeper's expired leases and the reconciler's
// lease. Each primitive is atomic — its transitions, their events and,
// for OperationRecord, the tenants' callbacks and the owning teams'
// escalation notices commit together: one statement on PostgreSQL, one
// transaction on SQLite.
type TransitionDriver interface {
	// OperationClaim moves p.Tenant's operation p.ID to IN_FLIGHT when it
	// is PREPARED with payload hash p.Hash: the next fence and attempt, a
	// lease until p.LeaseEnd, sent at p.Now, and on its first claim the
	// start of its same-key replay window; with its event. found is false,
	// and nothing written, when it is not.
	OperationClaim(ctx context.Context, p ClaimParams) (op Operation, found bool, err error)
	// OperationClaimBatch claims, as OperationClaim, up to p.Max PREPARED
	// operations fairly across tenants — each tenant's oldest first, rank
	// by rank, so one tenant's burst does not delay the others — each
	// leased for its target's lease in p.Leases (microseconds by target)
	// or else p.Lease, skipping rows another claim holds, and returns them
	// oldest first.
	OperationClaimBatch(ctx context.Context, p ClaimBatchParams) ([]Operation, error)
	// OperationRecord applies each row to its operation if it is still in
	// the row's From state at its Fence, with the row's event, and queues
	// the tenant's callback of each state in CallbackStates (when the
	// tenant has an endpoint; one per state reached) and the owning team's
	// notice of each escalation. It returns the operations it changed, in
	// any order.
	OperationRecord(ctx context.Context, p RecordParams) ([]Operation, error)
	// OperationSweepExpired moves up to p.Max IN_FLIGHT operations whose
	// lease ended by p.Now to UNKNOWN, due for the reconciler at once,
	// with their events, skipping rows another statement holds; it
	// returns the transitions.
	OperationSweepExpired(ctx context.Context, p SweepParams) ([]Transition, error)
	// OperationLeaseDue leases up to p.Max UNKNOWN operations due by
	// p.Now, none of p.SkipTargets': the next fence, a lease and the next
	// look at p.LeaseEnd, the state unchanged, no event. It picks fairly
	// across tenants — each tenant's oldest due first, rank by rank — at
	// a cost that does not grow with the backlog, and skips rows another
	// replica holds.
	OperationLeaseDue(ctx context.Context, p LeaseDueParams) ([]Operation, error)
}

// LeaseDueParams are OperationLeaseDue's.
type LeaseDueParams struct {
	Max           int
	Now, LeaseEnd time.Time
	SkipTargets   []string // never nil
}

// TransitionEvent is the actor and reason of the events a primitive
// writes for every row it changes.
type TransitionEvent struct{ Actor, Reason string }

// ClaimParams are OperationClaim's.
type ClaimParams struct {
	Tenant, ID    string
	Hash          []byte
	Now, LeaseEnd time.Time
	Event         TransitionEvent
}

// ClaimBatchParams are OperationClaimBatch's.
type ClaimBatchParams struct {
	Max    int
	Now    time.Time
	Lease  time.Duration
	Leases map[string]int64 // microseconds by target
	Event  TransitionEvent
}

// LeasesJSON is p.Leases as a JSON object, target → microseconds, the
// form both dialects read it in.
func (p ClaimBatchParams) LeasesJSON() string {
	b, _ := json.Marshal(p.Leases) // a map of strings to integers always encodes
	return string(b)
}

// RecordParams are OperationRecord's: the rows apply at Now.
type RecordParams struct {
	Now  time.Time
	Rows []RecordRow
}

// RecordRow is one outcome as OperationRecord writes it: NextAt is when
// an UNKNOWN operation is next due (nil for any other state), Evidence
// the event's evidence as a JSON object.
type RecordRow struct {
	Tenant    string          `json:"tenant_id"`
	ID        string          `json:"operation_id"`
	Fence     int64           `json:"fence"`
	From      State           `json:"from_state"`
	To        State           `json:"to_state"`
	RemoteRef string          `json:"remote_ref"`
	NextAt    *time.Time      `json:"next_at"`
	Reason    string          `json:"reason"`
	Actor     string          `json:"actor"`
	Evidence  json.RawMessage `json:"evidence"`
	SentAt    *time.Time      `json:"sent_at"`
	EndReplay bool            `json:"end_replay"`
}

// RowsJSON is p.Rows as a JSON array of objects named as in the tags.
func (p RecordParams) RowsJSON() ([]byte, error) { return json.Marshal(p.Rows) }

// SweepParams are OperationSweepExpired's.
type SweepParams struct {
	Now   time.Time
	Max   int
	Event TransitionEvent
}

// sweepChunk bounds one sweep statement, so that a large backlog never
// holds many row locks at once.
const sweepChunk = 1000

// Claim implements Store: one conditional write is the compare-and-swap,
// and it re-checks the approved hash.
func (l *Ledger) Claim(ctx context.Context, tenant, id string, hash []byte, lease time.Duration) (Operation, error) {
	if lease <= 0 {
		return Operation{}, Errorf(EInvalid, "lease must be positive")
	}
	id, ok := ParseID(id)
	if !ok {
		return Operation{}, operationNotFound()
	}
	now := l.clock()
	op, found, err := l.d.OperationClaim(ctx, ClaimParams{Tenant: tenant, ID: id, Hash: hash, Now: now,
		LeaseEnd: now.Add(lease), Event: claimed})
	if err != nil {
		return Operation{}, fmt.Errorf("claim: %w", err)
	}
	if !found {
		cur, err := l.Get(ctx, tenant, id)
		if err != nil {
			return Operation{}, err
		}
		return Operation{}, notClaimable(cur, hash)
	}
	l.tellClaimed(ctx, []Operation{op})
	return verifyClaimed(ctx, op, l.Record)
}

// claimed is the event of every sender claim.
var claimed = TransitionEvent{Actor: ActorExecutor, Reason: "claimed"}

// ClaimBatch implements Store.
func (l *Ledger) ClaimBatch(ctx context.Context, n int, lease time.Duration, byTarget ...TargetLease) ([]Operation, error) {
	if err := checkClaimBatch(n, lease, byTarget); err != nil {
		return nil, err
	}
	leases := make(map[string]int64, len(byTarget))
	for _, t := range byTarget {
		leases[t.Target] = t.Lease.Microseconds()
	}
	ops, err := l.d.OperationClaimBatch(ctx, ClaimBatchParams{Max: n, Now: l.clock(), Lease: lease, Leases: leases,
		Event: claimed})
	if err != nil {
		return nil, fmt.Errorf("claim batch: %w", err)
	}
	l.tellClaimed(ctx, ops)
	out := ops[:0]
	for _, op := range ops {
		if op, err := verifyClaimed(ctx, op, l.Record); err == nil {
			out = append(out, op) // else escalated by verifyClaimed; never sent
		}
	}
	return out, nil
}

// tellClaimed tells the observer of committed claims (PREPARED → IN_FLIGHT).
func (l *Ledger) tellClaimed(ctx context.Context, ops []Operation) {
	var c Commit
	for _, op := range ops {
		c.Add(op, Prepared)
	}
	c.Tell(ctx, l.observer)
}

// Record implements Store.
func (l *Ledger) Record(ctx context.Context, o Outcome) (Operation, error) {
	ops, errs, err := l.record(ctx, []Outcome{o})
	if err != nil {
		return Operation{}, err
	}
	if errs[0] != nil {
		return Operation{}, errs[0]
	}
	return ops[0], nil
}

// RecordBatch implements Store.
func (l *Ledger) RecordBatch(ctx context.Context, outcomes []Outcome) ([]error, error) {
	_, errs, err := l.record(ctx, outcomes)
	return errs, err
}

// record applies the valid outcomes with one OperationRecord, whose write
// carries each one's fence and expected state, and explains each valid
// outcome that did not apply. When the write fails, it records the
// outcomes one by one, so that one refused row costs only its own verdict.
func (l *Ledger) record(ctx context.Context, outcomes []Outcome) ([]Operation, []error, error) {
	now := l.clock()
	errs, evidence := validateOutcomes(outcomes)
	p := RecordParams{Now: now}
	index := make(map[string]int, len(outcomes))
	for i, o := range outcomes {
		if errs[i] != nil {
			continue
		}
		id, ok := ParseID(o.OperationID)
		if !ok {
			errs[i] = operationNotFound()
			continue
		}
		index[o.Tenant+"/"+id] = i
		p.Rows = append(p.Rows, RecordRow{Tenant: o.Tenant, ID: id, Fence: o.Fence, From: o.From, To: o.To,
			RemoteRef: o.RemoteRef, NextAt: nextReconcile(o, now), Reason: o.Reason, Actor: o.Actor,
			Evidence: evidence[i], SentAt: o.SentAt, EndReplay: o.EndReplay})
	}
	ops := make([]Operation, len(outcomes))
	applied := make([]bool, len(outcomes))
	if len(p.Rows) > 0 {
		got, err := l.d.OperationRecord(ctx, p)
		if err != nil {
			err = fmt.Errorf("record: %w", err)
			if len(p.Rows) == 1 || ctx.Err() != nil {
				return nil, nil, err
			}
			ops, allFailed := recordEach(ctx, outcomes, errs, l.Record)
			if allFailed {
				return nil, nil, err
			}
			return ops, errs, nil
		}
		for _, op := range got {
			i := index[op.Tenant+"/"+op.ID]
			ops[i], applied[i] = op, true
		}
		var c Commit
		for i, op := range ops {
			if applied[i] {
				c.Add(op, outcomes[i].From)
			}
		}
		c.Tell(ctx, l.observer)
	}
	explainUnapplied(ctx, outcomes, errs, applied, l.Get)
	return ops, errs, nil
}

// SweepExpired implements Store. It works in chunks so that a large
// backlog never holds many row locks at once; each chunk commits on its
// own and is told to the observer.
func (l *Ledger) SweepExpired(ctx context.Context) (int, error) {
	total := 0
	for {
		ts, err := l.d.OperationSweepExpired(ctx, SweepParams{Now: l.clock(), Max: sweepChunk,
			Event: TransitionEvent{Actor: ActorSweeper, Reason: ReasonLeaseExpired}})
		if err != nil {
			return total, fmt.Errorf("sweep: %w", err)
		}
		Commit{Transitions: ts}.Tell(ctx, l.observer)
		total += len(ts)
		if len(ts) < sweepChunk {
			return total, nil
		}
	}
}

// LeaseUnknown implements Store. The lease moves next_reconcile_at to its
// end, so a reconciler that dies simply makes the operation due again when
// its lease runs out. Picking is fair across tenants: a tenant with ten
// thousand due operations gets no more of a batch than one with ten until
// the smaller runs out.
func (l *Ledger) LeaseUnknown(ctx context.Context, n int, lease time.Duration, skipTargets ...string) ([]Operation, error) {
	if lease <= 0 || n <= 0 {
		return nil, Errorf(EInvalid, "batch size and lease must be positive")
	}
	if skipTargets == nil {
		skipTargets = []string{} // a NULL list would skip everything
	}
	now := l.clock()
	ops, err := l.d.OperationLeaseDue(ctx, LeaseDueParams{Max: n, Now: now, LeaseEnd: now.Add(lease),
		SkipTargets: skipTargets})
	if err != nil {
		return nil, fmt.Errorf("lease unknown: %w", err)
	}
	return ops, nil
}
