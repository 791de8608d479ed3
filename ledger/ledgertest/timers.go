package ledgertest

import (
	"slices"
	"testing"
	"time"
)

// timer is one NewTimer channel that has neither fired nor been stopped.
type timer struct {
	at time.Time
	c  chan time.Time
}

// NewTimer returns a channel that receives the clock's time once Advance
// (or Next) has moved the clock d on, and stop, which forgets the timer.
// With it the clock is a reconciler.Clock: a loop given it sleeps until
// the test advances the clock, so the test drives every tick.
func (c *Clock) NewTimer(d time.Duration) (<-chan time.Time, func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch, func() bool { return false }
	}
	t := &timer{at: c.now.Add(d), c: ch}
	c.timers = append(c.timers, t)
	c.changed()
	return ch, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		n := len(c.timers)
		c.timers = slices.DeleteFunc(c.timers, func(o *timer) bool { return o == t })
		if len(c.timers) == n {
			return false // fired or stopped already
		}
		c.changed()
		return true
	}
}

// Next moves the clock to the earliest timer waiting on it, fires that
// timer and any due at the same instant, and returns how far it moved: 0
// when no timer waits.
func (c *Clock) Next() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.timers) == 0 {
		return 0
	}
	at := c.timers[0].at
	for _, t := range c.timers[1:] {
		if t.at.Before(at) {
			at = t.at
		}
	}
	d := at.Sub(c.now)
	c.now = at
	c.fire()
	return d
}

// Timers returns how many timers wait to fire.
func (c *Clock) Timers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// WaitTimers blocks until at least n timers wait to fire: until the loops
// that sleep on the clock have done all they could at its time. A loop
// makes a timer only once it has finished a round, so, after Advance or
// Next has fired its timer, WaitTimers returns only when the round that
// timer began is over. It fails the test after a minute: a safety net
// against a hang, never what decides a test.
func (c *Clock) WaitTimers(t testing.TB, n int) {
	t.Helper()
	deadline := time.NewTimer(time.Minute)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		got := len(c.timers)
		if c.wake == nil {
			c.wake = make(chan struct{})
		}
		wake := c.wake
		c.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-wake:
		case <-deadline.C:
			t.Fatalf("test clock: %d timers waiting after a minute, want %d", got, n)
		}
	}
}

// fire sends the time to every timer that is due and forgets them. The
// caller holds c.mu.
func (c *Clock) fire() {
	n := len(c.timers)
	c.timers = slices.DeleteFunc(c.timers, func(t *timer) bool {
		if t.at.After(c.now) {
			return false
		}
		t.c <- c.now // buffered, and sent once
		return true
	})
	if len(c.timers) != n {
		c.changed()
	}
}

// changed wakes every WaitTimers. The caller holds c.mu.
func (c *Clock) changed() {
	if c.wake != nil {
		close(c.wake)
		c.wake = nil
	}
}
