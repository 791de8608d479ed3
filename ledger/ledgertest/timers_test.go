package ledgertest

import (
	"testing"
	"time"
)

// A timer fires when the clock passes it, once, and not before; a stopped
// one never does; Next jumps to the earliest; WaitTimers returns once a
// sleeper has made its timer.
func TestClock_Timers(t *testing.T) {
	t.Parallel()
	c := NewClock()
	start := c.Now()
	early, _ := c.NewTimer(time.Minute)
	late, _ := c.NewTimer(time.Hour)
	_, stop := c.NewTimer(2 * time.Minute)
	if c.Timers() != 3 || !stop() || stop() || c.Timers() != 2 {
		t.Fatalf("after one stop: %d timers", c.Timers())
	}
	c.Advance(time.Minute - time.Nanosecond)
	select {
	case <-early:
		t.Fatal("fired before its time")
	default:
	}
	c.Advance(time.Nanosecond)
	if got := <-early; !got.Equal(start.Add(time.Minute)) {
		t.Fatalf("fired with %s", got)
	}
	if d := c.Next(); d != 59*time.Minute || !(<-late).Equal(start.Add(time.Hour)) || c.Timers() != 0 {
		t.Fatalf("Next moved %s; %d timers left", d, c.Timers())
	}
	if d := c.Next(); d != 0 {
		t.Fatalf("Next with no timer moved %s", d)
	}
	now, _ := c.NewTimer(0)
	if got := <-now; !got.Equal(c.Now()) || c.Timers() != 0 {
		t.Fatal("a timer of 0 does not fire at once")
	}

	slept := make(chan struct{})
	go func() {
		ch, stop := c.NewTimer(time.Second)
		defer stop()
		<-ch
		close(slept)
	}()
	c.WaitTimers(t, 1)
	c.Next()
	<-slept
}
