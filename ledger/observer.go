package ledger

import "context"

// Observer is told what a store committed: the transitions its event log
// gained and the creations it refused. A store calls it after the
// transaction commits, on the writer's goroutine, never for one that rolled
// back, and exactly once per committed change, whichever entry point (API,
// loops, console, CLI) made it. Package metrics implements it; a store
// without one (nil) tells nobody.
//
// Committed must be quick and cannot fail: what it does is no part of the
// write, which has already happened.
type Observer interface {
	Committed(ctx context.Context, c Commit)
}

// Commit is what one committed transaction wrote that observers count.
type Commit struct {
	// Transitions are the events appended, in order: a creation (From ""
	// → PREPARED), a claim, a recorded outcome (also UNKNOWN → UNKNOWN, a
	// reconciler looking again), an expired lease, an approved resolution.
	Transitions []Transition
	// Refused are the tenants of creations refused as a payload conflict
	// (EPayloadConflict): no transition, but the recorded refusal managers
	// count.
	Refused []string
}

// Add appends the transition of op, as written, from from. On a nil c it
// does nothing (a write nobody observes).
func (c *Commit) Add(op Operation, from State) {
	if c == nil {
		return
	}
	c.Transitions = append(c.Transitions, Transition{Tenant: op.Tenant, OperationID: op.ID,
		Target: op.Target, From: from, To: op.State, At: op.UpdatedAt})
}

// Refuse appends a refused creation of the tenant's (EPayloadConflict).
// On a nil c it does nothing.
func (c *Commit) Refuse(tenant string) {
	if c != nil {
		c.Refused = append(c.Refused, tenant)
	}
}

// Tell hands c to o, if there is an observer and something to tell.
// Stores call it after the commit.
func (c Commit) Tell(ctx context.Context, o Observer) {
	if o == nil || len(c.Transitions) == 0 && len(c.Refused) == 0 {
		return
	}
	o.Committed(ctx, c)
}

// Observable is a store that tells an Observer what it commits. Both
// stores are; the observer is set once, when the store is opened.
type Observable interface {
	SetObserver(Observer)
}
