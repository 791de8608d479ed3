package reconciler

import (
	"testing"
	"time"

	"settle/ledger"
)

// The next look is never scheduled past the operation's deadline.
func TestNextAtStopsAtTheDeadline(t *testing.T) {
	r := &Reconciler{MinBackoff: time.Second, MaxBackoff: 5 * time.Minute}
	r.defaults()
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	sent := now.Add(-time.Hour) // the backoff is at its ceiling: 4–6 minutes
	for name, c := range map[string]struct {
		deadline *time.Time
		soon     bool
		min, max time.Duration
	}{
		"NoDeadline":       {nil, false, 4 * time.Minute, 6 * time.Minute},
		"FarDeadline":      {ptr(now.Add(time.Hour)), false, 4 * time.Minute, 6 * time.Minute},
		"NearDeadline":     {ptr(now.Add(10 * time.Second)), false, 10 * time.Second, 10 * time.Second},
		"SoonNearDeadline": {ptr(now.Add(100 * time.Millisecond)), true, 100 * time.Millisecond, 100 * time.Millisecond},
	} {
		t.Run(name, func(t *testing.T) {
			op := ledger.Operation{CreatedAt: sent, LastSentAt: &sent, Deadline: c.deadline}
			for i := 0; i < 20; i++ { // the backoff is jittered
				if got := r.nextAt(op, now, c.soon).Sub(now); got < c.min || got > c.max {
					t.Fatalf("next look in %s, want within [%s, %s]", got, c.min, c.max)
				}
			}
		})
	}
}

func ptr(t time.Time) *time.Time { return &t }
