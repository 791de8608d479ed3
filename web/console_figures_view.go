package web

import (
	"strconv"
	"strings"
	"time"

	"settle/ledger"
	"settle/views"
)

// Chart geometry, in SVG user units: one bar per day, so a 90-day chart
// is as wide as a 7-day one and each bar is narrower; room above the
// bars for their values and below the baseline for the dates.
const (
	chartW, chartH = 600, 190
	chartTop       = 30  // room for the scale and the tallest bar's value
	chartBase      = 160 // the baseline; the dates are drawn below it
)

// windowDays lists every UTC day of the window, oldest first.
func windowDays(since time.Time, days int) []string {
	out := make([]string, days)
	for i := range out {
		out[i] = since.AddDate(0, 0, i).Format(time.DateOnly)
	}
	return out
}

// tickEvery is the date axis's step in days: a label every seventh day up
// to a month, every fourteenth beyond, so that no two labels of a 90-day
// chart overlap (a label is about 35 units wide; 14 days are 93).
func tickEvery(days int) int {
	if days > 31 {
		return 14
	}
	return 7
}

// minValueSlot is the narrowest bar slot, in chart units, that has room
// for its value above it; narrower bars (more than a month of days) show
// only the highest value, the table beside the chart every one.
const minValueSlot = 18

// barChart draws one bar per day with its value above it (none for an
// empty day; only the highest when the bars are too narrow to carry one
// each) and a date axis: the first and last day and every tickEvery
// between them. values are what the bars measure, texts how each is said.
func barChart(id, title string, days []string, values []float64, texts []string, total string) views.BarChart {
	most, at := 0.0, -1
	for i, v := range values {
		if v > most {
			most, at = v, i
		}
	}
	maxText := "0"
	desc := title + ", " + days[0] + " to " + days[len(days)-1] + ": " + total
	if at >= 0 {
		maxText = texts[at]
		desc += "; highest " + texts[at] + " on " + days[at]
	}
	desc += ". The table beside it lists every day."
	c := views.BarChart{ID: id, Title: title, Desc: desc, ViewBox: "0 0 " + figN(chartW) + " " + figN(chartH),
		Width: figN(chartW), Height: figN(chartH), MaxText: "max " + maxText, MaxY: figN(12),
		Axis: views.Line{X1: "0", Y1: figN(chartBase), X2: figN(chartW), Y2: figN(chartBase)}}
	slot := float64(chartW) / float64(max(len(days), 1))
	for i, d := range days {
		h := 0.0
		if most > 0 {
			h = values[i] / most * float64(chartBase-chartTop)
		}
		b := views.Bar{X: figF(float64(i)*slot + slot*0.1), Y: figF(float64(chartBase) - h),
			W: figF(slot * 0.8), H: figF(h), Label: d + ": " + texts[i],
			TextX: figF(float64(i)*slot + slot/2), TextY: figF(float64(chartBase) - h - 3)}
		if values[i] > 0 && (slot >= minValueSlot || i == at) {
			b.Value = texts[i]
		}
		c.Bars = append(c.Bars, b)
		if step := tickEvery(len(days)); i == 0 || i == len(days)-1 || (i%step == 0 && len(days)-1-i >= step/2+1) {
			anchor := "middle"
			switch {
			case i == 0:
				anchor = "start"
			case i == len(days)-1:
				anchor = "end"
			}
			c.Ticks = append(c.Ticks, views.AxisText{X: figF(float64(i)*slot + slot/2), Y: figN(chartBase + 16), Anchor: anchor, Text: d[5:]})
		}
	}
	if len(c.Ticks) > 0 {
		c.Ticks[0].X, c.Ticks[len(c.Ticks)-1].X = "0", figN(chartW)
		if len(c.Ticks) == 1 {
			c.Ticks[0].X, c.Ticks[0].Anchor = figF(slot/2), "middle"
		}
	}
	return c
}

// countChart is a bar chart of a count per day.
func countChart(id, title string, days []string, perDay map[string]int) views.BarChart {
	values, texts := make([]float64, len(days)), make([]string, len(days))
	total := 0
	for i, d := range days {
		values[i], texts[i] = float64(perDay[d]), figN(perDay[d])
		total += perDay[d]
	}
	return barChart(id, title, days, values, texts, figN(total)+" in all")
}

// timeChart is a bar chart of the median time to a final state of the
// episodes resolved on each day.
func timeChart(id, title string, days []string, perDay map[string]ledger.Measure) views.BarChart {
	values, texts := make([]float64, len(days)), make([]string, len(days))
	n := 0
	for i, d := range days {
		m := perDay[d]
		texts[i] = "none resolved"
		if m.Count > 0 {
			values[i], texts[i] = max(float64(m.Median), 1), ledger.FigureDuration(m.Median)
			n += m.Count
		}
	}
	return barChart(id, title, days, values, texts, figPlural(n, "episode")+" resolved")
}

// dayRows are the per-day table's rows, a run of two or more days without
// any entry collapsed into one row, so that a quiet month is a few rows.
func dayRows(t ledger.TargetFigures, days []string) []views.DayRow {
	var out []views.DayRow
	empty := func(d string) bool {
		return t.StartedPerDay[d] == 0 && t.EscalatedPerDay[d] == 0 && t.FinalPerDay[d].Count == 0
	}
	for i := 0; i < len(days); i++ {
		d := days[i]
		if j := i; empty(d) {
			for j+1 < len(days) && empty(days[j+1]) {
				j++
			}
			if j > i {
				out = append(out, views.DayRow{Day: d + " to " + days[j] + " (" + figN(j-i+1) + " days)", Empty: true,
					Started: "0", Escalated: "0", Resolved: "0", Median: "—"})
				i = j
				continue
			}
		}
		fin := t.FinalPerDay[d]
		out = append(out, views.DayRow{Day: d, Started: figN(t.StartedPerDay[d]), Escalated: figN(t.EscalatedPerDay[d]),
			Resolved: figN(fin.Count), Median: resolutionText(fin.Median, fin.Count)})
	}
	return out
}

// sparkline draws a series as a polyline scaled to its own maximum.
func sparkline(title string, series []int) views.Sparkline {
	const w, h = 120, 24
	most := 1
	for _, n := range series {
		most = max(most, n)
	}
	pts := make([]string, len(series))
	step := float64(w) / float64(max(len(series)-1, 1))
	for i, n := range series {
		pts[i] = figF(float64(i)*step) + "," + figF(float64(h-1)-float64(n)/float64(most)*float64(h-2))
	}
	return views.Sparkline{Title: title, ViewBox: "0 0 " + figN(w) + " " + figN(h), Width: figN(w), Height: figN(h),
		Points: strings.Join(pts, " ")}
}

// figuresView builds a tenant's figures page. Every number it shows is
// one of f's, so the page, the CSV and `settle figures` agree.
func figuresView(f ledger.TenantFigures, q figuresQuery, now time.Time) views.FiguresPage {
	tenant := ledger.PlainText(f.Tenant, 63)
	days := windowDays(q.Span.Since, q.Days)
	v := views.FiguresPage{Tenant: tenant, Windows: windowTabs("/figures", q, f.Tenant),
		Period: days[0] + " to " + days[len(days)-1] + " (UTC), " + figPlural(q.Days, "day"),
		From:   q.From, To: q.To, CSVHref: "/figures.csv?" + q.params(f.Tenant).Encode(), Problem: q.Problem,
		Empty: "No operation of this tenant changed state in this window."}
	v.Measures = []views.Measure{
		{ID: "open-escalations", Label: "Escalations still open now, waiting on people", Value: figN(f.OpenEscalations)},
		{ID: "oldest-escalation", Label: "Oldest open escalation", Value: oldestText(f.OldestEscalation, now)},
		{ID: "payload-conflicts", Label: "Requests refused in this window: same intent, different payload", Value: figN(f.PayloadConflicts)},
		{ID: "duplicates", Label: "Duplicates found by audit in this window", Value: figN(f.Duplicates)},
	}
	for i, t := range f.Targets {
		name := ledger.PlainText(t.Target, 63)
		total := 0
		for _, d := range days {
			total += t.StartedPerDay[d]
		}
		id := "chart-" + figN(i*3)
		tf := views.TargetFigures{Target: name, Total: figN(total), Days: dayRows(t, days),
			Measures: targetMeasures(t, total, now),
			Charts: []views.BarChart{
				countChart(id, "Operations of "+name+" whose outcome became uncertain, per day", days, t.StartedPerDay),
				timeChart("chart-"+figN(i*3+1), "Median time to a final outcome of "+name+", per day resolved", days, t.FinalPerDay),
				countChart("chart-"+figN(i*3+2), "Escalations to people for "+name+", per day", days, t.EscalatedPerDay),
			}}
		v.Targets = append(v.Targets, tf)
	}
	return v
}

// targetMeasures are a target's figures, each labelled with what it
// counts.
func targetMeasures(t ledger.TargetFigures, started int, now time.Time) []views.Measure {
	times := func(m ledger.Measure) string {
		if m.Count == 0 {
			return "—"
		}
		return ledger.FigureDuration(m.Median) + " median, " + ledger.FigureDuration(m.Worst) + " worst"
	}
	return []views.Measure{
		{ID: "started", Label: "Outcome became uncertain (entered “Confirmation pending” or was escalated)", Value: figN(started)},
		{ID: "auto", Label: "Resolved automatically: reached a final outcome without people", Value: figN(t.Automatic.Count)},
		{ID: "auto-time", Label: "Resolved automatically: time from uncertain to final outcome", Value: times(t.Automatic)},
		{ID: "people", Label: "Resolved by people: escalated, then final after an approved resolution", Value: figN(t.ByPeople.Count)},
		{ID: "people-time", Label: "Resolved by people: time from uncertain to final outcome", Value: times(t.ByPeople)},
		{ID: "escalation-time", Label: "Resolved by people: time the escalation took (escalated to final outcome)", Value: times(t.Escalation)},
		{ID: "escalated", Label: "Escalations to people in this window (an operation escalated twice counts twice)", Value: figN(t.Escalated)},
		{ID: "open", Label: "Escalations still open now, waiting on people", Value: figN(t.OpenEscalations)},
		{ID: "oldest", Label: "Oldest of them", Value: oldestText(t.OldestEscalation, now)},
	}
}

// windowTabs are the 7/30/90-day links of a figures page.
func windowTabs(path string, q figuresQuery, tenant string) []views.Tab {
	tabs := make([]views.Tab, 0, len(figureWindows))
	for _, w := range figureWindows {
		p := figuresQuery{Window: w.value, sort: q.sort, dir: q.dir}.params(tenant)
		tabs = append(tabs, views.Tab{ID: w.value, Label: "Last " + figN(w.days) + " days",
			Href: path + "?" + p.Encode(), Current: q.Window == w.value})
	}
	return tabs
}

// resolutionText is a resolution time ("124 ms", "4 min 10 s"); "—" when
// nothing was resolved, so that no zero reads as "instant".
func resolutionText(d time.Duration, n int) string {
	if n == 0 {
		return "—"
	}
	return ledger.FigureDuration(d)
}

func oldestText(at *time.Time, now time.Time) string {
	if at == nil {
		return "none"
	}
	return "escalated " + relative(at.UTC(), now) + " (" + at.UTC().Format("2006-01-02 15:04 UTC") + ")"
}

func figPlural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return figN(n) + " " + word + "s"
}

func figN(n int) string { return strconv.Itoa(n) }

func figF(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }
