package ledger

import (
	"context"
	"log/slog"
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
