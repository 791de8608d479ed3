package ledger_test

import (
	"bytes"
	"testing"
	"time"

	"settle/ledger"
)

// The one CSV format of the CLI and the console: a header, every day of
// the window (zero days too), times in milliseconds, empty where nothing
// was measured, each row saying what it counts, tenant-wide rows without
// a target, and names with control characters quoted so that they cannot
// add a row.
func TestWriteFiguresCSV(t *testing.T) {
	t.Parallel()
	oldest := time.Date(2030, 1, 3, 4, 5, 6, 0, time.UTC)
	f := ledger.TenantFigures{Tenant: "acme\nevil,row", Since: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC),
		Until: time.Date(2030, 1, 3, 0, 0, 0, 0, time.UTC),
		Targets: []ledger.TargetFigures{{Target: "pay", StartedPerDay: map[string]int{"2030-01-02": 3},
			Automatic:   ledger.Measure{Count: 2, Median: 124 * time.Millisecond, Worst: 1500 * time.Millisecond},
			ByPeople:    ledger.Measure{Count: 1, Median: 90 * time.Minute, Worst: 90 * time.Minute},
			Escalation:  ledger.Measure{Count: 1, Median: time.Hour, Worst: time.Hour},
			FinalPerDay: map[string]ledger.Measure{"2030-01-02": {Count: 3, Median: 1500 * time.Millisecond, Worst: 90 * time.Minute}},
			Escalated:   1, EscalatedPerDay: map[string]int{"2030-01-02": 1}, OpenEscalations: 1, OldestEscalation: &oldest}},
		OpenEscalations: 1, OldestEscalation: &oldest, PayloadConflicts: 4, Duplicates: 5}
	var buf bytes.Buffer
	if err := ledger.WriteFiguresCSV(&buf, f, ledger.TenantFigures{Tenant: "globex", Since: f.Since, Until: f.Until}); err != nil {
		t.Fatal(err)
	}
	const tenant = `"""acme\nevil,row"""`
	want := `tenant,target,day,metric,value,counts
` + tenant + `,,,since,2030-01-01T00:00:00Z,"start of the window, included"
` + tenant + `,,,until,2030-01-03T00:00:00Z,"end of the window, excluded"
` + tenant + `,pay,2030-01-01,episodes_started,0,operations whose outcome became uncertain (entered UNKNOWN or ESCALATED) that day
` + tenant + `,pay,2030-01-01,escalations,0,entries into ESCALATED that day
` + tenant + `,pay,2030-01-01,resolved,0,episodes that reached SUCCEEDED or FAILED_TERMINAL that day
` + tenant + `,pay,2030-01-01,resolved_median_ms,,median time from the start of those episodes to their final state
` + tenant + `,pay,2030-01-02,episodes_started,3,operations whose outcome became uncertain (entered UNKNOWN or ESCALATED) that day
` + tenant + `,pay,2030-01-02,escalations,1,entries into ESCALATED that day
` + tenant + `,pay,2030-01-02,resolved,3,episodes that reached SUCCEEDED or FAILED_TERMINAL that day
` + tenant + `,pay,2030-01-02,resolved_median_ms,1500,median time from the start of those episodes to their final state
` + tenant + `,pay,,episodes_started,3,operations whose outcome became uncertain (entered UNKNOWN or ESCALATED) in the window
` + tenant + `,pay,,resolved_automatically,2,episodes that reached a final state without people (no ESCALATED)
` + tenant + `,pay,,resolved_automatically_median_ms,124,median time from the start of the episode to its final state
` + tenant + `,pay,,resolved_automatically_worst_ms,1500,worst time from the start of the episode to its final state
` + tenant + `,pay,,resolved_by_people,1,episodes that reached a final state after ESCALATED and an approved resolution
` + tenant + `,pay,,resolved_by_people_median_ms,5400000,median time from the start of the episode to its final state
` + tenant + `,pay,,resolved_by_people_worst_ms,5400000,worst time from the start of the episode to its final state
` + tenant + `,pay,,escalation_median_ms,3600000,median time people took: from ESCALATED to the final state
` + tenant + `,pay,,escalation_worst_ms,3600000,worst time people took: from ESCALATED to the final state
` + tenant + `,pay,,escalations,1,entries into ESCALATED in the window
` + tenant + `,pay,,open_escalations,1,"operations ESCALATED now, waiting on people"
` + tenant + `,pay,,oldest_open_escalation,2030-01-03T04:05:06Z,when the oldest of them was escalated
` + tenant + `,,,open_escalations,1,"operations ESCALATED now, waiting on people"
` + tenant + `,,,oldest_open_escalation,2030-01-03T04:05:06Z,when the oldest of them was escalated
` + tenant + `,,,payload_conflicts,4,"requests refused: same intent, different payload"
` + tenant + `,,,duplicates,5,duplicates found by audit
globex,,,since,2030-01-01T00:00:00Z,"start of the window, included"
globex,,,until,2030-01-03T00:00:00Z,"end of the window, excluded"
globex,,,open_escalations,0,"operations ESCALATED now, waiting on people"
globex,,,oldest_open_escalation,,when the oldest of them was escalated
globex,,,payload_conflicts,0,"requests refused: same intent, different payload"
globex,,,duplicates,0,duplicates found by audit
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
