package metrics

import (
	"context"
	"log/slog"
	"time"

	"settle/ledger"
)

// Store counts what the loops record through it: the one place the
// executor, sweeper, reconciler and webhook inbox write transitions. It
// adds reads only for the rare events: an operation entering UNKNOWN
// (its target, when RecordBatch does not return it) and a resolution from
// UNKNOWN (when the episode began, from the event log).
type Store struct {
	ledger.Store
	Metrics *Metrics
	Log     *slog.Logger
}

// Record implements ledger.Store.
func (s Store) Record(ctx context.Context, o ledger.Outcome) (ledger.Operation, error) {
	op, err := s.Store.Record(ctx, o)
	if err == nil {
		s.count(ctx, o, op.Target)
	}
	return op, err
}

// RecordBatch implements ledger.Store.
func (s Store) RecordBatch(ctx context.Context, outcomes []ledger.Outcome) ([]error, error) {
	errs, err := s.Store.RecordBatch(ctx, outcomes)
	if err != nil {
		return errs, err
	}
	for i, o := range outcomes {
		if i < len(errs) && errs[i] == nil {
			s.count(ctx, o, "")
		}
	}
	return errs, nil
}

// ClaimBatch implements ledger.Store: each claim is PREPARED → IN_FLIGHT.
func (s Store) ClaimBatch(ctx context.Context, n int, lease time.Duration, byTarget ...ledger.TargetLease) ([]ledger.Operation, error) {
	ops, err := s.Store.ClaimBatch(ctx, n, lease, byTarget...)
	for _, op := range ops {
		s.Metrics.Transition(op.Tenant, ledger.Prepared, ledger.InFlight)
	}
	return ops, err
}

// SweepExpired implements ledger.Store. The store returns only how many
// leases expired, so these entries into UNKNOWN carry no target or tenant.
func (s Store) SweepExpired(ctx context.Context) (int, error) {
	n, err := s.Store.SweepExpired(ctx)
	if n > 0 {
		s.Metrics.transitionsN("", ledger.InFlight, ledger.Unknown, n)
		s.Metrics.unknown.WithLabelValues(s.Metrics.with("", "")...).Add(float64(n))
	}
	return n, err
}

// count records an applied outcome; target is "" when not yet known.
// A reconciler looking again (UNKNOWN → UNKNOWN) is no transition.
func (s Store) count(ctx context.Context, o ledger.Outcome, target string) {
	if o.From == o.To {
		return
	}
	s.Metrics.Transition(o.Tenant, o.From, o.To)
	entered := o.To == ledger.Unknown
	resolved := o.From == ledger.Unknown && (o.To == ledger.Succeeded || o.To == ledger.FailedTerminal || o.To == ledger.Escalated)
	if !entered && !resolved {
		return
	}
	if target == "" {
		op, err := s.Store.Summary(ctx, o.Tenant, o.OperationID)
		if err != nil {
			s.Log.Warn("metrics: cannot read the operation's target", "operation_id", o.OperationID, "err", err)
			return
		}
		target = op.Target
	}
	if entered {
		s.Metrics.UnknownEntry(o.Tenant, target)
		return
	}
	if d, ok := s.episode(ctx, o); ok {
		s.Metrics.Resolved(o.Tenant, target, o.To, d)
	}
}

// episode returns how long the operation was UNKNOWN before the
// resolution just recorded: from its last entry into UNKNOWN to its last
// event.
func (s Store) episode(ctx context.Context, o ledger.Outcome) (time.Duration, bool) {
	evs, err := s.Store.Events(ctx, o.Tenant, o.OperationID)
	if err != nil || len(evs) == 0 {
		s.Log.Warn("metrics: cannot read the operation's events", "operation_id", o.OperationID, "err", err)
		return 0, false
	}
	last := evs[len(evs)-1]
	for i := len(evs) - 1; i >= 0; i-- {
		if e := evs[i]; e.To == ledger.Unknown && e.From != ledger.Unknown {
			return last.At.Sub(e.At), true
		}
	}
	return 0, false
}
