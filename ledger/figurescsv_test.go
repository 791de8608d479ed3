package ledger_test

import (
	"bytes"
	"testing"
	"time"

	"settle/ledger"
)

// The one CSV format of the CLI and the console: days in order, durations
// in seconds, tenant-wide rows without a target, and names with control
// characters quoted so that they cannot add a row.
func TestWriteFiguresCSV(t *testing.T) {
	t.Parallel()
	oldest := time.Date(2030, 1, 3, 4, 5, 6, 0, time.UTC)
	f := ledger.TenantFigures{Tenant: "acme\nevil,row", Since: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC),
		Until: time.Date(2030, 1, 8, 0, 0, 0, 0, time.UTC),
		Targets: []ledger.TargetFigures{{Target: "pay", UnknownPerDay: map[string]int{"2030-01-02": 3, "2030-01-01": 1},
			Resolved: 2, Median: 90 * time.Second, Worst: 1500 * time.Millisecond, Escalated: 1}},
		OpenEscalations: 1, OldestEscalation: &oldest, PayloadConflicts: 4, Duplicates: 5}
	var buf bytes.Buffer
	if err := ledger.WriteFiguresCSV(&buf, f); err != nil {
		t.Fatal(err)
	}
	const tenant = `"""acme\nevil,row"""`
	want := tenant + `,,since,2030-01-01T00:00:00Z
` + tenant + `,,until,2030-01-08T00:00:00Z
` + tenant + `,pay,unknown_entries:2030-01-01,1
` + tenant + `,pay,unknown_entries:2030-01-02,3
` + tenant + `,pay,resolved,2
` + tenant + `,pay,resolution_median_seconds,90.000
` + tenant + `,pay,resolution_worst_seconds,1.500
` + tenant + `,pay,escalated,1
` + tenant + `,,open_escalations,1
` + tenant + `,,oldest_open_escalation,2030-01-03T04:05:06Z
` + tenant + `,,payload_conflicts,4
` + tenant + `,,duplicates,5
`
	if got := buf.String(); got != want {
		t.Fatalf("csv:\n%s\nwant:\n%s", got, want)
	}
}

// WindowStart is whole UTC days ending with today's; the rollups answer
// exactly the moments it returns.
func TestWindowStart(t *testing.T) {
	t.Parallel()
	now := time.Date(2030, 1, 31, 23, 59, 0, 0, time.FixedZone("x", 3*3600)) // 20:59 UTC
	got := ledger.WindowStart(now, 30)
	if want := time.Date(2030, 1, 2, 0, 0, 0, 0, time.UTC); !got.Equal(want) || !ledger.IsMidnightUTC(got) {
		t.Fatalf("WindowStart = %s, want %s", got, want)
	}
	if ledger.IsMidnightUTC(got.Add(time.Microsecond)) {
		t.Fatal("a moment after midnight counted as midnight")
	}
}

// A window is Since inclusive, Until exclusive, at most MaxWindowDays;
// dates name whole days, both included, and never end after today.
func TestWindow(t *testing.T) {
	t.Parallel()
	now := time.Date(2030, 3, 10, 15, 4, 5, 0, time.UTC)
	w, err := ledger.DatesEnding("2030-03-01", "2030-03-09", now)
	if err != nil || !w.Since.Equal(time.Date(2030, 3, 1, 0, 0, 0, 0, time.UTC)) ||
		!w.Until.Equal(time.Date(2030, 3, 10, 0, 0, 0, 0, time.UTC)) || w.Days() != 9 || !w.WholeDays() {
		t.Fatalf("dates: %+v %v", w, err)
	}
	if w.Contains(w.Until) || !w.Contains(w.Since) {
		t.Error("the end is not exclusive or the start not inclusive")
	}
	if w, err := ledger.DatesEnding("", "", now); err != nil || w.Days() != 30 || !w.Until.Equal(ledger.DaysEnding(now, 30).Until) {
		t.Errorf("defaults: %+v %v", w, err)
	}
	for name, c := range map[string][2]string{
		"backwards": {"2030-03-09", "2030-03-01"},
		"future":    {"2030-03-01", "2030-03-11"},
		"too long":  {"2029-01-01", "2030-03-01"},
		"not a day": {"2030-03-01", "9 March"},
	} {
		if _, err := ledger.DatesEnding(c[0], c[1], now); ledger.ErrorCode(err) != ledger.EInvalid {
			t.Errorf("%s: %v, want invalid", name, err)
		}
	}
	if d := ledger.DaysEnding(now, 7); d.Days() != 7 || !d.WholeDays() || d.Validate() != nil {
		t.Errorf("7 days: %+v", d)
	}
	if (ledger.Window{Since: now, Until: now.Add(time.Hour)}).WholeDays() {
		t.Error("an hour is whole days")
	}
}
