package ledger

import (
	"encoding/csv"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// FiguresCSVHeader is the first row of WriteFiguresCSV.
var FiguresCSVHeader = []string{"tenant", "target", "day", "metric", "value", "counts"}

// WriteFiguresCSV writes the figures of one or more tenants (the
// cross-tenant overview) as CSV: a header row (FiguresCSVHeader), then per
// tenant the window, per target one row of each daily count for every day
// of the window (days without entries too, as the page lists them), the
// target's measures, and the tenant-wide counts. Every row says in its
// last column what it counts. Times are whole milliseconds; a median or
// worst of nothing is empty, never a zero that reads as instant. It is
// the one export format that `settle figures --csv`, the console's
// /figures.csv and /figures/overview.csv share.
//
// Text a tenant or a contract supplied (tenant and target names) is
// written unchanged when every character is graphic, and otherwise quoted
// with Go escapes, so that no control character or invalid byte reaches a
// spreadsheet or a terminal. A value that itself begins with a quote is
// quoted too, so a quoted value is never ambiguous.
func WriteFiguresCSV(w io.Writer, fs ...TenantFigures) error {
	cw := csv.NewWriter(w)
	_ = cw.Write(FiguresCSVHeader)
	for _, f := range fs {
		writeTenantCSV(cw, f)
	}
	cw.Flush()
	return cw.Error()
}

func writeTenantCSV(cw *csv.Writer, f TenantFigures) {
	row := func(target, day, metric, value, counts string) {
		_ = cw.Write([]string{csvText(f.Tenant), csvText(target), day, metric, value, counts})
	}
	itoa := strconv.Itoa
	row("", "", "since", f.Since.Format(time.RFC3339), "start of the window, included")
	row("", "", "until", f.Until.Format(time.RFC3339), "end of the window, excluded")
	days := Window{Since: f.Since, Until: f.Until}.DayList()
	for _, t := range f.Targets {
		for _, d := range days {
			fin := t.FinalPerDay[d]
			row(t.Target, d, "episodes_started", itoa(t.StartedPerDay[d]), "operations whose outcome became uncertain (entered UNKNOWN or ESCALATED) that day")
			row(t.Target, d, "escalations", itoa(t.EscalatedPerDay[d]), "entries into ESCALATED that day")
			row(t.Target, d, "resolved", itoa(fin.Count), "episodes that reached SUCCEEDED or FAILED_TERMINAL that day")
			row(t.Target, d, "resolved_median_ms", csvMillis(fin.Median, fin.Count), "median time from the start of those episodes to their final state")
		}
		total := 0
		for _, n := range t.StartedPerDay {
			total += n
		}
		row(t.Target, "", "episodes_started", itoa(total), "operations whose outcome became uncertain (entered UNKNOWN or ESCALATED) in the window")
		measureRows(row, t.Target, "resolved_automatically", t.Automatic, "episodes that reached a final state without people (no ESCALATED)", "from the start of the episode to its final state")
		measureRows(row, t.Target, "resolved_by_people", t.ByPeople, "episodes that reached a final state after ESCALATED and an approved resolution", "from the start of the episode to its final state")
		row(t.Target, "", "escalation_median_ms", csvMillis(t.Escalation.Median, t.Escalation.Count), "median time people took: from ESCALATED to the final state")
		row(t.Target, "", "escalation_worst_ms", csvMillis(t.Escalation.Worst, t.Escalation.Count), "worst time people took: from ESCALATED to the final state")
		row(t.Target, "", "escalations", itoa(t.Escalated), "entries into ESCALATED in the window")
		row(t.Target, "", "open_escalations", itoa(t.OpenEscalations), "operations ESCALATED now, waiting on people")
		row(t.Target, "", "oldest_open_escalation", csvTime(t.OldestEscalation), "when the oldest of them was escalated")
	}
	row("", "", "open_escalations", itoa(f.OpenEscalations), "operations ESCALATED now, waiting on people")
	row("", "", "oldest_open_escalation", csvTime(f.OldestEscalation), "when the oldest of them was escalated")
	row("", "", "payload_conflicts", itoa(f.PayloadConflicts), "requests refused: same intent, different payload")
	row("", "", "duplicates", itoa(f.Duplicates), "duplicates found by audit")
}

func measureRows(row func(target, day, metric, value, counts string), target, name string, m Measure, counts, took string) {
	row(target, "", name, strconv.Itoa(m.Count), counts)
	row(target, "", name+"_median_ms", csvMillis(m.Median, m.Count), "median time "+took)
	row(target, "", name+"_worst_ms", csvMillis(m.Worst, m.Count), "worst time "+took)
}

// csvMillis is d in whole milliseconds, empty when nothing was measured.
func csvMillis(d time.Duration, n int) string {
	if n == 0 {
		return ""
	}
	return strconv.FormatInt(d.Round(time.Millisecond).Milliseconds(), 10)
}

func csvTime(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func csvText(s string) string {
	if strings.HasPrefix(s, `"`) || strings.IndexFunc(s, func(r rune) bool { return !unicode.IsGraphic(r) }) >= 0 ||
		!utf8.ValidString(s) {
		return strconv.QuoteToGraphic(s)
	}
	return s
}
