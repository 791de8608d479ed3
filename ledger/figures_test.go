package ledger_test

import (
	"testing"
	"time"

	"settle/ledger"
)

func TestComputeFigures(t *testing.T) {
	day := time.Date(2030, 1, 1, 10, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return day.Add(d) }
	ts := []ledger.Transition{
		{"", "a", "pay", ledger.InFlight, ledger.Unknown, at(0)},
		{"", "a", "pay", ledger.Unknown, ledger.Unknown, at(time.Minute)}, // a reconcile round, not a new entry
		{"", "a", "pay", ledger.Unknown, ledger.Succeeded, at(2 * time.Minute)},
		{"", "b", "pay", ledger.InFlight, ledger.Unknown, at(time.Hour)},
		{"", "b", "pay", ledger.Unknown, ledger.Escalated, at(5 * time.Hour)},
		{"", "c", "pay", ledger.InFlight, ledger.Unknown, at(24 * time.Hour)}, // still pending
		{"", "d", "pay", ledger.InFlight, ledger.Succeeded, at(time.Minute)},  // never UNKNOWN
		{"", "e", "ship", ledger.InFlight, ledger.Unknown, at(0)},
		{"", "e", "ship", ledger.Unknown, ledger.FailedTerminal, at(10 * time.Minute)},
	}
	f := ledger.ComputeFigures("acme", ledger.Since(day), ts)
	if len(f.Targets) != 2 || f.Targets[0].Target != "pay" || f.Targets[1].Target != "ship" {
		t.Fatalf("targets %+v", f.Targets)
	}
	pay := f.Targets[0]
	if pay.UnknownPerDay["2030-01-01"] != 2 || pay.UnknownPerDay["2030-01-02"] != 1 || len(pay.UnknownPerDay) != 2 {
		t.Fatalf("unknown per day %v", pay.UnknownPerDay)
	}
	// Episodes of 2 minutes and 4 hours: median of two is their mean.
	if pay.Resolved != 2 || pay.Worst != 4*time.Hour || pay.Median != (2*time.Minute+4*time.Hour)/2 || pay.Escalated != 1 {
		t.Fatalf("pay %+v", pay)
	}
	ship := f.Targets[1]
	if ship.Resolved != 1 || ship.Median != 10*time.Minute || ship.Worst != 10*time.Minute || ship.Escalated != 0 {
		t.Fatalf("ship %+v", ship)
	}
}
