package ledger

import (
	"strconv"
	"time"
)

// FigureDuration says a measured time as people read it, never rounding a
// short one to zero: "124 ms", "4.5 s", "45 s", "7 min 30 s", "2 h 5 min",
// "24 h 30 min". The page, `settle figures` and the charts use it.
func FigureDuration(d time.Duration) string {
	itoa := func(d time.Duration) string { return strconv.FormatInt(int64(d), 10) }
	switch {
	case d < 0:
		return "-" + FigureDuration(-d)
	case d < time.Second:
		return itoa(d.Round(time.Millisecond)/time.Millisecond) + " ms"
	case d < 10*time.Second:
		return strconv.FormatFloat(d.Round(100*time.Millisecond).Seconds(), 'f', 1, 64) + " s"
	case d < time.Minute:
		return itoa(d.Round(time.Second)/time.Second) + " s"
	case d < time.Hour:
		d = d.Round(time.Second)
		return withRest(itoa(d/time.Minute)+" min", itoa(d%time.Minute/time.Second), " s")
	}
	d = d.Round(time.Minute)
	return withRest(itoa(d/time.Hour)+" h", itoa(d%time.Hour/time.Minute), " min")
}

func withRest(s, rest, unit string) string {
	if rest == "0" {
		return s
	}
	return s + " " + rest + unit
}
