// Package timing is what settle's measuring commands share: a measure
// repeated a number of times, its median and p95, and a ratio to an
// anchor measured in the same run (absolute figures drift with the
// machine; ratios measured together do not).
package timing

import (
	"fmt"
	"slices"
	"time"
)

// Times are the durations of a measure's runs, shortest first.
type Times []time.Duration

// Repeat runs timed runs times and returns how long each run took, sorted.
// untimed, when set, runs after each run outside the clock: to put back
// what the run consumed, so that every run measures the same thing.
func Repeat(runs int, timed, untimed func() error) (Times, error) {
	if runs <= 0 {
		return nil, fmt.Errorf("runs must be positive, not %d", runs)
	}
	t := make(Times, 0, runs)
	for range runs {
		t0 := time.Now()
		if err := timed(); err != nil {
			return nil, err
		}
		t = append(t, time.Since(t0))
		if untimed != nil {
			if err := untimed(); err != nil {
				return nil, err
			}
		}
	}
	slices.Sort(t)
	return t, nil
}

// Median is the middle run (the upper of the two middle ones).
func (t Times) Median() time.Duration { return t[len(t)/2] }

// P95 is the run that 95% of the runs took no longer than; with fewer than
// 20 runs, the slowest.
func (t Times) P95() time.Duration { return t[len(t)*95/100] }

// Ratio is d as a multiple of anchor (0 when there is no anchor).
func Ratio(d, anchor time.Duration) float64 {
	if anchor <= 0 {
		return 0
	}
	return float64(d) / float64(anchor)
}

// Short is d for a table: whole microseconds under a millisecond ("840 µs"),
// else milliseconds with two figures after the point ("12.35 ms").
func Short(d time.Duration) string {
	if d < time.Millisecond {
		return fmt.Sprintf("%d µs", d.Microseconds())
	}
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}

// Sorted is durations measured by hand (when two measures share their
// runs) as Times.
func Sorted(d []time.Duration) Times {
	t := slices.Clone(Times(d))
	slices.Sort(t)
	return t
}
