package ledger_test

import (
	"testing"
	"time"

	"settle/ledger"
)

func TestSpokenDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                             "0 ms",
		500 * time.Microsecond:        "under 1 ms",
		456969663 * time.Nanosecond:   "456 ms",
		5820478755 * time.Nanosecond:  "5.8 s",
		2 * time.Second:               "2 s",
		15 * time.Second:              "15 s",
		65820478755 * time.Nanosecond: "1 min 6 s",
		time.Hour:                     "1 h",
		2*time.Hour + 5*time.Minute + 9*time.Second: "2 h 5 min",
		24 * time.Hour:    "1 day",
		76 * time.Hour:    "3 days 4 h",
		-90 * time.Second: "-1 min 30 s",
	} {
		if got := ledger.SpokenDuration(d); got != want {
			t.Errorf("SpokenDuration(%v) = %q, want %q", d, got, want)
		}
	}
}
