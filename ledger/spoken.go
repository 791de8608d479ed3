package ledger

import (
	"strconv"
	"time"
)

// SpokenDuration writes a duration as people read it, in the evidence and
// on the console alike: "457 ms", "5.8 s", "1 min 6 s", "2 h 5 min",
// "3 days 4 h". Below a minute it keeps what matters (milliseconds under
// a second, a tenth under ten seconds); above, the two largest units.
func SpokenDuration(d time.Duration) string {
	if d < 0 {
		return "-" + SpokenDuration(-d)
	}
	switch {
	case d < time.Millisecond:
		if d == 0 {
			return "0 ms"
		}
		return "under 1 ms"
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + " ms"
	case d < 10*time.Second:
		return strconv.FormatFloat(float64(d.Round(100*time.Millisecond))/float64(time.Second), 'f', -1, 64) + " s"
	case d < time.Minute:
		return strconv.Itoa(int(d.Round(time.Second)/time.Second)) + " s"
	}
	d = d.Round(time.Second)
	days, h, m, s := int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour), int(d%time.Hour/time.Minute), int(d%time.Minute/time.Second)
	two := func(a int, ua string, b int, ub string) string {
		out := strconv.Itoa(a) + " " + ua
		if b > 0 {
			out += " " + strconv.Itoa(b) + " " + ub
		}
		return out
	}
	switch {
	case days > 0:
		unit := "days"
		if days == 1 {
			unit = "day"
		}
		return two(days, unit, h, "h")
	case h > 0:
		return two(h, "h", m, "min")
	}
	return two(m, "min", s, "s")
}
