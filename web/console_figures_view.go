package web

import (
	"strconv"
	"strings"
	"time"

	"settle/ledger"
	"settle/views"
)

// Chart geometry, in SVG user units: one bar per day, so a 90-day chart
// is as wide as a 7-day one and each bar is narrower.
const (
	chartW, chartH = 600, 160
	chartTop       = 16 // room for the scale's label
)

// windowDays lists every UTC day of the window, oldest first.
func windowDays(since time.Time, days int) []string {
	out := make([]string, days)
	for i := range out {
		out[i] = since.AddDate(0, 0, i).Format(time.DateOnly)
	}
	return out
}

// barChart draws one bar per day; a day without entries has a bar of
// height zero, so that the bars and the table's rows correspond.
func barChart(id, title string, days []string, perDay map[string]int) views.BarChart {
	most := 0
	for _, d := range days {
		most = max(most, perDay[d])
	}
	c := views.BarChart{ID: id, Title: title, ViewBox: "0 0 " + figN(chartW) + " " + figN(chartH),
		Width: figN(chartW), Height: figN(chartH), MaxText: figN(most), MaxY: figN(chartTop - 4),
		Axis: views.Line{X1: "0", Y1: figN(chartH), X2: figN(chartW), Y2: figN(chartH)}}
	slot := float64(chartW) / float64(max(len(days), 1))
	for i, d := range days {
		n := perDay[d]
		h := 0.0
		if most > 0 {
			h = float64(n) / float64(most) * float64(chartH-chartTop)
		}
		c.Bars = append(c.Bars, views.Bar{X: figF(float64(i)*slot + slot*0.1), Y: figF(float64(chartH) - h),
			W: figF(slot * 0.8), H: figF(h), Label: d + ": " + figN(n)})
	}
	return c
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
		{ID: "open-escalations", Label: "Open escalations", Value: figN(f.OpenEscalations)},
		{ID: "oldest-escalation", Label: "Oldest open escalation", Value: oldestText(f.OldestEscalation, now)},
		{ID: "payload-conflicts", Label: "Payload conflicts refused", Value: figN(f.PayloadConflicts)},
		{ID: "duplicates", Label: "Duplicates found by audit", Value: figN(f.Duplicates)},
	}
	for i, t := range f.Targets {
		name := ledger.PlainText(t.Target, 63)
		tf := views.TargetFigures{Target: name, Resolved: figN(t.Resolved), Escalated: figN(t.Escalated),
			Median: resolutionText(t.Median, t.Resolved), Worst: resolutionText(t.Worst, t.Resolved),
			Chart: barChart("chart-"+figN(i), "Operations of "+name+" entering “Confirmation pending” per day", days, t.UnknownPerDay)}
		total := 0
		for _, d := range days {
			total += t.UnknownPerDay[d]
			tf.Days = append(tf.Days, views.DayCount{Day: d, Count: figN(t.UnknownPerDay[d])})
		}
		tf.Total = figN(total)
		v.Targets = append(v.Targets, tf)
	}
	return v
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

// resolutionText is a resolution time to the second; "—" when nothing was
// resolved, so that no zero reads as "instant".
func resolutionText(d time.Duration, n int) string {
	if n == 0 {
		return "—"
	}
	return d.Round(time.Second).String()
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
