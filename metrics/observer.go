package metrics

import (
	"context"
	"log/slog"
	"time"

	"settle/ledger"
)

// Observer counts what the ledger commits: it is the stores'
// ledger.Observer, so every transition is counted once, after its commit,
// whichever entry point made it (the API, the loops, the console, the CLI).
// It reads only for a resolution from UNKNOWN: when the episode began, from
// the event log.
type Observer struct {
	Metrics *Metrics
	// Events reads an operation's event log (a ledger.Store).
	Events interface {
		Events(ctx context.Context, tenant, id string) ([]ledger.Event, error)
	}
	Log *slog.Logger
}

var _ ledger.Observer = Observer{}

// Committed implements ledger.Observer. A creation (from no state) is not
// a transition of settle_transitions_total, and a reconciler looking again
// (UNKNOWN → UNKNOWN) is none either; a refused payload conflict counts in
// settle_payload_conflicts_total.
func (o Observer) Committed(ctx context.Context, c ledger.Commit) {
	for _, t := range c.Transitions {
		o.count(ctx, t)
	}
	for _, tenant := range c.Refused {
		o.Metrics.PayloadConflict(tenant)
	}
}

func (o Observer) count(ctx context.Context, t ledger.Transition) {
	if t.From == "" || t.From == t.To {
		return
	}
	o.Metrics.Transition(t.Tenant, t.From, t.To)
	switch {
	case t.To == ledger.Unknown:
		o.Metrics.UnknownEntry(t.Tenant, t.Target)
	case t.From == ledger.Unknown && (t.To == ledger.Succeeded || t.To == ledger.FailedTerminal || t.To == ledger.Escalated):
		if d, ok := o.episode(ctx, t); ok {
			o.Metrics.Resolved(t.Tenant, t.Target, t.To, d)
		}
	}
}

// episode returns how long the operation was UNKNOWN before the
// resolution t: from its last entry into UNKNOWN up to t.
func (o Observer) episode(ctx context.Context, t ledger.Transition) (time.Duration, bool) {
	evs, err := o.Events.Events(ctx, t.Tenant, t.OperationID)
	if err != nil {
		o.Log.Warn("metrics: cannot read the operation's events", "operation_id", t.OperationID, "err", err)
		return 0, false
	}
	for i := len(evs) - 1; i >= 0; i-- {
		if e := evs[i]; e.To == ledger.Unknown && e.From != ledger.Unknown && !e.At.After(t.At) {
			return t.At.Sub(e.At), true
		}
	}
	return 0, false
}
