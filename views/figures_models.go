package views

// BarChart is a server-drawn bar chart: every coordinate is computed by
// the web package, so the component only places it. Coordinates are in
// the SVG's own user units (ViewBox).
type BarChart struct {
	ID      string // unique on the page, for aria-labelledby
	Title   string // read by screen readers as the chart's name
	ViewBox string // "0 0 W H"
	Width   string
	Height  string
	Bars    []Bar
	Axis    Line   // the baseline
	MaxText string // the value at the top of the scale ("12")
	MaxY    string // where MaxText is drawn
}

// Bar is one bar of a BarChart, with its value in words for a tooltip.
type Bar struct {
	X, Y, W, H string
	Label      string // "2026-11-30: 4"
}

// Line is one straight line of a chart.
type Line struct{ X1, Y1, X2, Y2 string }

// Sparkline is a small line chart of a series, without axes.
type Sparkline struct {
	Title   string
	ViewBox string
	Width   string
	Height  string
	Points  string // the polyline's points: "x,y x,y …"
}

// DayCount is one row of a per-day table.
type DayCount struct {
	Day   string // "2026-11-30"
	Count string
}

// TargetFigures is one target's figures on the figures page.
type TargetFigures struct {
	Target    string
	Chart     BarChart
	Days      []DayCount // every day of the window, oldest first
	Total     string     // operations entering UNKNOWN in the window
	Resolved  string
	Median    string // "4m 10s", or "—" when nothing was resolved
	Worst     string
	Escalated string
}

// Measure is one labelled figure.
type Measure struct {
	ID    string // for tests
	Label string
	Value string
}

// FiguresPage is one tenant's figures over a window.
type FiguresPage struct {
	Layout
	Tenant   string
	Windows  []Tab  // 7, 30 and 90 days
	Period   string // "2026-11-02 to 2026-12-01 (UTC)"
	From, To string // the date form's values, "2026-11-02", both days included
	CSVHref  string
	Overview string    // link to the all-tenants overview, "" when p has one tenant
	Measures []Measure // the tenant-wide figures
	Targets  []TargetFigures
	Empty    string // shown when no target had a transition
	Problem  string // a parameter that could not be used, in words
}

// SortLink is a sortable column heading of the overview.
type SortLink struct {
	ID    string
	Label string
	Href  string
	Sort  string // "ascending", "descending" or "" (aria-sort)
}

// OverviewRow is one tenant on the all-tenants overview.
type OverviewRow struct {
	Tenant     string
	Href       string
	Unknown    string
	Median     string
	Worst      string
	Escalated  string
	Oldest     string
	Conflicts  string
	Duplicates string
	Spark      Sparkline
}

// FiguresOverview is the all-tenants overview.
type FiguresOverview struct {
	Layout
	Windows []Tab
	Period  string
	Columns []SortLink
	Rows    []OverviewRow
	Empty   string
}
