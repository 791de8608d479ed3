package web

import (
	"strings"
	"testing"
	"time"

	"settle/ledger"
)

func TestLoadZone(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"UTC": true, "Europe/Berlin": true, " Asia/Kolkata ": true, "America/Argentina/Buenos_Aires": true, "Etc/GMT+5": true,
		"": false, "Local": false, "Europe/Nowhere": false, "../etc/passwd": false, "/etc/localtime": false,
		"Europe/Berlin\x00": false, "Europe/Berlin; x": false, strings.Repeat("A", 65): false,
	} {
		if _, ok := loadZone(name); ok != want {
			t.Errorf("loadZone(%q) = %v, want %v", name, ok, want)
		}
	}
}

func TestAbsoluteTime(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 2, 9, 42, 5, 0, time.UTC)
	for zone, want := range map[string]string{
		"UTC":              "2026-12-02 09:42:05 UTC",
		"Europe/Berlin":    "2026-12-02 10:42:05 CET",
		"Asia/Kolkata":     "2026-12-02 15:12:05 IST",
		"Asia/Kathmandu":   "2026-12-02 15:27:05 UTC+05:45",
		"America/New_York": "2026-12-02 04:42:05 EST",
	} {
		loc, ok := loadZone(zone)
		if !ok {
			t.Fatalf("zone %s", zone)
		}
		if got := absoluteTime(at, loc); got != want {
			t.Errorf("%s: %q, want %q", zone, got, want)
		}
	}
	berlin, _ := loadZone("Europe/Berlin")
	now := at.Add(3 * time.Minute).In(berlin)
	if got := timeText(at, now); got != "3 min ago (2026-12-02 10:42:05 CET)" {
		t.Errorf("timeText: %q", got)
	}
	// timeView keeps the machine-readable UTC and prints the reader's clock.
	v := timeView(&at, now, "")
	if v.ISO != "2026-12-02T09:42:05Z" || v.Absolute != "2026-12-02 10:42:05 CET" || v.Relative != "3 min ago" {
		t.Errorf("timeView: %+v", v)
	}
	if got := clockTime(at.Add(time.Hour), now); got != "11:42 CET" {
		t.Errorf("clockTime today: %q", got)
	}
	if got := clockTime(at.Add(48*time.Hour), now); got != "2026-12-04 10:42:05 CET" {
		t.Errorf("clockTime another day: %q", got)
	}
}

func TestDeadlineText(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	soon, past := now.Add(43*time.Minute), now.Add(-time.Minute)
	op := func(st ledger.State, d *time.Time) ledger.Operation {
		return ledger.Operation{State: st, Deadline: d, Target: "payments"}
	}
	for _, c := range []struct {
		name string
		op   ledger.Operation
		want string // "" when no deadline is shown
	}{
		{"Succeeded", op(ledger.Succeeded, &soon), ""},
		{"Failed", op(ledger.FailedTerminal, &soon), ""},
		{"Escalated", op(ledger.Escalated, &soon), ""},
		{"Unknown", op(ledger.Unknown, &soon),
			"settle stops trying and escalates to payments-team at 09:43 UTC (in 43 min) if the outcome is still unknown"},
		{"UnknownPast", op(ledger.Unknown, &past), "passed at 08:59 UTC: settle stops trying and escalates it to payments-team at its next check"},
		{"Prepared", op(ledger.Prepared, &soon), "if the outcome of the send becomes unknown, settle keeps asking payments until 09:43 UTC (in 43 min), then stops trying and escalates to payments-team"},
		{"InFlightNone", op(ledger.InFlight, nil), "none: settle keeps asking payments until it answers, and never escalates for lateness"},
	} {
		got, ok := deadlineText(c.op, "payments-team", now)
		if c.want == "" {
			if ok {
				t.Errorf("%s: shown %q", c.name, got)
			}
			continue
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
