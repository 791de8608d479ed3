package reconciler

import (
	"context"
	"time"
)

// claimWindow is the part of an outbox claim's lease in which its
// deliveries may run. Every POST of a batch must have ended, answered or
// cut off, by half the lease after the claim was asked for — not half the
// lease after that POST started, which for the last of a batch waiting
// behind slow endpoints ends past the lease, when another replica may
// already have claimed and delivered the same notification. The window is
// measured on the monotonic clock from before the claim, so a slow claim
// statement only shortens it.
type claimWindow struct {
	end time.Time
	min time.Duration // a POST is not started with less than this left
}

// openClaimWindow is called just before the claim statement.
func openClaimWindow(lease time.Duration) claimWindow {
	return claimWindow{end: time.Now().Add(lease / 2), min: lease / 10}
}

// post returns a context for one delivery ending with the window, or ok
// false when too little of it is left to start one: the notification falls
// due again when its lease runs out, for this replica or another. Shutdown
// does not cut a POST off (an acknowledgement settle did not see would be
// delivered again); the window bounds it instead.
func (w claimWindow) post(ctx context.Context) (context.Context, context.CancelFunc, bool) {
	if time.Until(w.end) < w.min {
		return nil, nil, false
	}
	pctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), w.end)
	return pctx, cancel, true
}
