package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"settle/ledger"
)

// On-call sees where the replay window starts and ends.
func TestPrintOperation_Window(t *testing.T) {
	created := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	claimed := created.Add(10 * time.Minute)
	for name, c := range map[string]struct {
		op   ledger.Operation
		want []string
	}{
		"Claimed": {ledger.Operation{State: ledger.Unknown, CreatedAt: created, FirstClaimedAt: &claimed,
			RetryWindow: time.Hour, RetryWindowEnd: claimed.Add(time.Hour)},
			[]string{"first_claimed     2030-01-02T03:14:05Z", "retry_window      1h0m0s from the first claim",
				"retry_window_end  2030-01-02T04:14:05Z"}},
		"Prepared": {ledger.Operation{State: ledger.Prepared, CreatedAt: created, RetryWindow: time.Hour,
			RetryWindowEnd: created.Add(time.Hour)},
			[]string{"first_claimed     -", "1h0m0s from the first claim (not claimed yet)"}},
		"ClaimedBeforeItWasRecorded": {ledger.Operation{State: ledger.Succeeded, CreatedAt: created,
			RetryWindow: time.Hour, RetryWindowEnd: created.Add(time.Hour)},
			[]string{"first_claimed     -", "1h0m0s from creation"}},
		"EndedEarly": {ledger.Operation{State: ledger.Unknown, CreatedAt: created, FirstClaimedAt: &claimed,
			RetryWindow: time.Hour, RetryWindowEnd: claimed.Add(time.Minute)},
			[]string{"1h0m0s from the first claim, ended early", "retry_window_end  2030-01-02T03:15:05Z"}},
		"NoWindow": {ledger.Operation{State: ledger.Unknown, CreatedAt: created, FirstClaimedAt: &claimed,
			RetryWindowEnd: claimed}, []string{"none (no same-key replay)"}},
	} {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			printOperation(&b, c.op, nil)
			for _, w := range c.want {
				if !strings.Contains(b.String(), w) {
					t.Fatalf("output lacks %q:\n%s", w, b.String())
				}
			}
		})
	}
}
