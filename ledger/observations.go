package ledger

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
)

// ObservationStore carries what a process that serves no metrics (a CLI
// command) committed to the replicas that do: the command records each
// committed Commit in the ledger (Recorder), and a running settle serve
// drains the rows and tells its own Observer, so that each transition is
// counted by one replica, once.
type ObservationStore interface {
	// RecordObservations stores c's transitions and refusals, to be
	// drained. An empty c stores nothing.
	RecordObservations(ctx context.Context, c Commit) error
	// DrainObservations deletes up to limit stored observations, oldest
	// first, and returns them as one Commit. Concurrent drainers (other
	// replicas) never get the same row: each is returned once. An empty
	// Commit when there are none; EInvalid for a non-positive limit.
	DrainObservations(ctx context.Context, limit int) (Commit, error)
}

// Recorder is the Observer of a process that serves no metrics: it stores
// what is committed (ObservationStore.RecordObservations) for a running
// server to count. A transition whose record fails is logged and not
// counted — the write it describes has happened, and Committed cannot
// fail.
type Recorder struct {
	Store ObservationStore
	Log   *slog.Logger
}

var _ Observer = Recorder{}

// Committed implements Observer.
func (r Recorder) Committed(ctx context.Context, c Commit) {
	// The write it describes has committed: record it even if the caller
	// is being cancelled.
	if err := r.Store.RecordObservations(context.WithoutCancel(ctx), c); err != nil {
		r.Log.Warn("committed transitions not recorded for the metrics of settle serve",
			"transitions", len(c.Transitions), "refused", len(c.Refused), "err", err)
	}
}

// Len is how many observations c holds: its transitions and refusals.
func (c Commit) Len() int { return len(c.Transitions) + len(c.Refused) }

// ObservationDriver is the SQL of the observations outbox.
type ObservationDriver interface {
	// ObservationInsert appends rows, in their order, all or none.
	ObservationInsert(ctx context.Context, rows []ObservationRow) error
	// ObservationDelete deletes up to max of the oldest rows and returns
	// them in any order, skipping rows another drainer holds.
	ObservationDelete(ctx context.Context, max int) ([]ObservationRow, error)
}

// ObservationRow is one stored observation: a transition, or (Refused) a
// tenant's refusal, which has only Tenant and At. ID orders the rows as
// they were recorded.
type ObservationRow struct {
	ID int64
	Transition
	Refused bool
}

// RecordObservations implements ObservationStore.
func (l *Ledger) RecordObservations(ctx context.Context, c Commit) error {
	if c.Len() == 0 {
		return nil
	}
	rows := make([]ObservationRow, 0, c.Len())
	for _, t := range c.Transitions {
		rows = append(rows, ObservationRow{Transition: t})
	}
	now := l.clock()
	for _, tenant := range c.Refused {
		rows = append(rows, ObservationRow{Transition: Transition{Tenant: tenant, At: now}, Refused: true})
	}
	if err := l.d.ObservationInsert(ctx, rows); err != nil {
		return fmt.Errorf("record observations: %w", err)
	}
	return nil
}

// DrainObservations implements ObservationStore.
func (l *Ledger) DrainObservations(ctx context.Context, limit int) (Commit, error) {
	if limit <= 0 {
		return Commit{}, Errorf(EInvalid, "limit must be positive, got %d", limit)
	}
	rows, err := l.d.ObservationDelete(ctx, limit)
	if err != nil {
		return Commit{}, fmt.Errorf("drain observations: %w", err)
	}
	slices.SortFunc(rows, func(a, b ObservationRow) int { return cmp.Compare(a.ID, b.ID) })
	var c Commit
	for _, r := range rows {
		if r.Refused {
			c.Refuse(r.Tenant)
		} else {
			c.Transitions = append(c.Transitions, r.Transition)
		}
	}
	return c, nil
}
