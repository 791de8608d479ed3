package web

import (
	"strconv"
	"testing"
	"time"
)

// A chart's date labels never overlap, at 7, 30 or 90 days (a label
// "MM-DD" is taken as 36 units wide, more than the 11 px text draws), and
// bars too narrow to carry their value show only the highest.
func TestBarChart_AxisReadable(t *testing.T) {
	t.Parallel()
	const labelW = 36.0
	for _, n := range []int{7, 30, 31, 45, 90} {
		days := windowDays(time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC), n)
		values, texts := make([]float64, n), make([]string, n)
		for i := range values {
			values[i], texts[i] = float64(i%5+1), strconv.Itoa(i%5+1)
		}
		values[n/2], texts[n/2] = 99, "99"
		c := barChart("x", "X", days, values, texts, "total")
		if len(c.Ticks) < 2 || c.Ticks[0].Text != days[0][5:] || c.Ticks[len(c.Ticks)-1].Text != days[n-1][5:] {
			t.Fatalf("%d days: ticks %+v", n, c.Ticks)
		}
		prevEnd := -1.0
		for _, tk := range c.Ticks {
			x, _ := strconv.ParseFloat(tk.X, 64)
			start := map[string]float64{"start": x, "middle": x - labelW/2, "end": x - labelW}[tk.Anchor]
			if start < prevEnd {
				t.Errorf("%d days: label %s overlaps the one before (%v < %v): %+v", n, tk.Text, start, prevEnd, c.Ticks)
			}
			prevEnd = start + labelW
		}
		shown := 0
		for _, b := range c.Bars {
			if b.Value != "" {
				shown++
			}
		}
		if n > 31 && shown != 1 || n <= 30 && shown != n {
			t.Errorf("%d days: %d values shown above bars", n, shown)
		}
	}
}
