package reconciler

import (
	"context"
	"time"
)

// Clock is where a loop reads the time and waits for its next tick. Nil
// means the wall clock. Tests pass a ledgertest.Clock and advance it by
// hand: they drive every tick, so that no test depends on how fast the
// machine is.
type Clock interface {
	Now() time.Time
	// NewTimer returns a channel that receives once d has passed, and
	// stop, which releases the timer if it has not fired yet (a test
	// clock counts the timers a loop waits on to know that it sleeps).
	NewTimer(d time.Duration) (c <-chan time.Time, stop func() bool)
}

// wallClock is the Clock of production: time.Now and time.NewTimer.
type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func (wallClock) NewTimer(d time.Duration) (<-chan time.Time, func() bool) {
	t := time.NewTimer(d)
	return t.C, t.Stop
}

// clockOr returns c, or the wall clock when c is nil.
func clockOr(c Clock) Clock {
	if c == nil {
		return wallClock{}
	}
	return c
}

// sleep waits d on c, or until ctx is done.
func sleep(ctx context.Context, c Clock, d time.Duration) {
	ch, stop := clockOr(c).NewTimer(d)
	defer stop()
	select {
	case <-ch:
	case <-ctx.Done():
	}
}
