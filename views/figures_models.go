package views

// BarChart is a server-drawn bar chart: every coordinate is computed by
// the web package, so the component only places it. Coordinates are in
// the SVG's own user units (ViewBox).
type BarChart struct {
	ID      string // unique on the page, for aria-labelledby
	Title   string // shown above the chart and read as its name
	Desc    string // what it shows in a sentence, read as its description
	ViewBox string // "0 0 W H"
	Width   string
	Height  string
	Bars    []Bar
	Axis    Line       // the baseline
	Ticks   []AxisText // the date axis: days under the baseline
	MaxText string     // the value at the top of the scale ("12")
	MaxY    string     // where MaxText is drawn
}

// Bar is one bar of a BarChart, with its value in words for a tooltip
// and, when it is not zero, a label above it.
type Bar struct {
	X, Y, W, H string
	Label      string // "2026-11-30: 4"
	Value      string // "4", "" for an empty day
	TextX      string // where Value is drawn
	TextY      string
}

// AxisText is one label of a chart's axis.
type AxisText struct {
	X, Y   string
	Anchor string // text-anchor: start, middle or end
	Text   string
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

// DayRow is one row of a per-day table: one day, or a run of days
// without any entry collapsed into one row.
type DayRow struct {
	Day       string // "2026-11-30", or "2026-11-01 to 2026-11-12"
	Empty     bool   // a run of days without entries
	Started   string
	Escalated string
	Resolved  string
	Median    string // median time to a final state of the day's resolved episodes, "—" without any
}

// TargetFigures is one target's figures on the figures page.
type TargetFigures struct {
	Target   string
	Measures []Measure  // labelled: what each one counts
	Charts   []BarChart // episodes started, escalations, time to resolution per day
	Days     []DayRow   // every day of the window, oldest first, empty runs collapsed
	Total    string     // episodes started in the window
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
	Tenant       string
	Href         string
	Started      string // episodes started
	Auto         string // resolved automatically
	AutoMedian   string // their median time to a final state (slowest target)
	People       string // resolved by people
	PeopleMedian string
	Escalated    string // entries into ESCALATED in the window
	Open         string // escalations open now
	Oldest       string
	Conflicts    string
	Duplicates   string
	Spark        Sparkline
}

// FiguresOverview is the all-tenants overview.
type FiguresOverview struct {
	Layout
	Windows []Tab
	Period  string
	Columns []SortLink
	Rows    []OverviewRow
	CSVHref string // the same tenants and window as CSV
	Empty   string
}
