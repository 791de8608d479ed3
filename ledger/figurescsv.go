package ledger

import (
	"encoding/csv"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// WriteFiguresCSV writes f as CSV rows of tenant,target,metric,value: the
// one export format that `settle figures --csv` and the console's
// /figures.csv share, so that both show the same numbers.
//
// Text a tenant or a contract supplied (tenant and target names) is
// written unchanged when every character is graphic, and otherwise quoted
// with Go escapes, so that no control character or invalid byte reaches a
// spreadsheet or a terminal. A value that itself begins with a quote is
// quoted too, so a quoted value is never ambiguous.
func WriteFiguresCSV(w io.Writer, f TenantFigures) error {
	cw := csv.NewWriter(w)
	row := func(target, metric, value string) {
		_ = cw.Write([]string{csvText(f.Tenant), csvText(target), metric, value})
	}
	row("", "since", f.Since.Format(time.RFC3339))
	row("", "until", f.Until.Format(time.RFC3339))
	for _, t := range f.Targets {
		days := make([]string, 0, len(t.UnknownPerDay))
		for d := range t.UnknownPerDay {
			days = append(days, d)
		}
		slices.Sort(days)
		for _, d := range days {
			row(t.Target, "unknown_entries:"+d, strconv.Itoa(t.UnknownPerDay[d]))
		}
		row(t.Target, "resolved", strconv.Itoa(t.Resolved))
		row(t.Target, "resolution_median_seconds", strconv.FormatFloat(t.Median.Seconds(), 'f', 3, 64))
		row(t.Target, "resolution_worst_seconds", strconv.FormatFloat(t.Worst.Seconds(), 'f', 3, 64))
		row(t.Target, "escalated", strconv.Itoa(t.Escalated))
	}
	row("", "open_escalations", strconv.Itoa(f.OpenEscalations))
	if f.OldestEscalation != nil {
		row("", "oldest_open_escalation", f.OldestEscalation.Format(time.RFC3339))
	}
	row("", "payload_conflicts", strconv.Itoa(f.PayloadConflicts))
	row("", "duplicates", strconv.Itoa(f.Duplicates))
	cw.Flush()
	return cw.Error()
}

func csvText(s string) string {
	if strings.HasPrefix(s, `"`) || strings.IndexFunc(s, func(r rune) bool { return !unicode.IsGraphic(r) }) >= 0 ||
		!utf8.ValidString(s) {
		return strconv.QuoteToGraphic(s)
	}
	return s
}
