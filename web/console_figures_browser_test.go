package web_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"settle/auth/oidctest"
	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/storetest"
	"settle/web"
	"settle/web/browsertest"
)

// TestConsole_FiguresBrowser is a manager's visit in headless Chromium
// over a week of acme's history on two targets (ledgertest.SeedFigures):
// for a 7-day window and for a window of dates that cuts the history, every
// number of the figures page (each target's per-day table, total,
// resolved, median, worst and escalated, the open escalations, the oldest
// of them, the payload conflicts and the duplicates, and the period) is
// the CSV's that `settle figures --csv` writes for the same window
// (ledger.WriteFiguresCSV over ledger.Figures), the SVG chart has a bar
// per day, and the CSV the browser downloads from the page is that CSV,
// byte for byte. The overview's numbers are the same figures summed per
// tenant. Every page passes axe and is kept as a screenshot.
func TestConsole_FiguresBrowser(t *testing.T) {
	t.Parallel()
	// The server and the test read the same instant, so that a window of
	// days is the same on the page and in the CSV even across midnight.
	// That instant is the last noon (UTC), so the history's days fall on
	// the same dates whatever the hour the test runs at.
	now := time.Now().UTC().Add(-12 * time.Hour).Truncate(24 * time.Hour).Add(12 * time.Hour)
	clk := ledgertest.NewClockAt(now.Add(-ledgertest.FiguresSpan))
	s := storetest.Postgres().New(t, clk.Now).(store)
	ledgertest.SeedFigures(t, s, clk, "acme")
	globexUnknown(t, s)
	c, prov := oidcConsole(t, s, web.Config{Now: func() time.Time { return now }}, `  - group: managers
    role: manager
    tenants: [acme, globex]
`,
		oidctest.User{Subject: "mia-3", Name: "Mia Manager", Email: "mia@example.test", Groups: []string{"managers"}})
	base := c.base

	b, check := visit(t)
	prov.SignInAs(t, "mia-3")
	if st := b.Navigate(base + "/figures?window=7d"); st != http.StatusOK {
		t.Fatalf("figures after sign-in: %d", st)
	}
	if n := b.Count(`[data-testid="overview-row"]`); n != 2 {
		t.Fatalf("a manager of two tenants sees %d overview rows, want 2", n)
	}
	if n := b.Count(`svg.sparkline[role="img"]`); n != 2 {
		t.Fatalf("%d sparklines", n)
	}
	week := ledger.DaysEnding(now, 7)
	for _, tenant := range []string{"acme", "globex"} {
		_, rows := figuresCSV(t, s, tenant, week)
		checkOverviewRow(t, b, tenant, rows, week)
	}
	check("figures-overview")
	// The overview's CSV, downloaded from its link: both tenants under one
	// header, as ledger.WriteFiguresCSV writes them.
	both, err := ledger.FiguresOf(context.Background(), s, []string{"acme", "globex"}, week)
	if err != nil {
		t.Fatal(err)
	}
	var overviewCSV bytes.Buffer
	if err := ledger.WriteFiguresCSV(&overviewCSV, both...); err != nil {
		t.Fatal(err)
	}
	if d := b.Download(browsertest.TestID("overview-csv-link")); !bytes.Equal(d.Body, overviewCSV.Bytes()) ||
		!strings.HasPrefix(d.Name, "settle-figures-all-tenants-") {
		t.Fatalf("the overview's CSV %s:\n%s\nwant\n%s", d.Name, d.Body, overviewCSV.Bytes())
	}

	// 30 days: most of them empty, collapsed into a few rows; every chart
	// is an image named by its visible title and described in words.
	if st := b.Navigate(base + "/figures?tenant=acme&window=30d"); st != http.StatusOK {
		t.Fatalf("30 days: %d", st)
	}
	sec := `[data-testid="target-figures"][data-target="payments"] `
	if rows, empty := b.Count(sec+`table.per-day tbody tr`), b.Count(sec+`[data-testid="empty-days"]`); empty == 0 || rows > 12 {
		t.Fatalf("30 days: %d table rows, %d of them runs of empty days", rows, empty)
	}
	if got := b.Text(sec + `[data-testid="empty-days"] th`); !strings.HasSuffix(got, " days)") {
		t.Fatalf("a run of empty days reads %q", got)
	}
	if n, named := b.Count(`svg.chart[role="img"]`), b.Count(`svg.chart[role="img"][aria-labelledby][aria-describedby] > title + desc`); n != 6 || named != 6 {
		t.Fatalf("%d charts, %d with a title and a description", n, named)
	}
	if n := b.Count(sec + `text[data-testid="axis-date"]`); n < 3*4 {
		t.Fatalf("%d dates on payments' axes over 30 days", n)
	}
	check("figures-30-days")

	today := now.Truncate(24 * time.Hour)
	from, to := today.AddDate(0, 0, -5).Format(time.DateOnly), today.AddDate(0, 0, -2).Format(time.DateOnly)
	dates, err := ledger.DateRange(from, to)
	if err != nil {
		t.Fatal(err)
	}
	for _, win := range []struct {
		name, query string
		w           ledger.Window
	}{
		{"figures-7-days", "window=7d", week},
		{"figures-dates", "from=" + from + "&to=" + to, dates},
	} {
		raw, rows := figuresCSV(t, s, "acme", win.w)
		requireRich(t, win.name, rows)
		if st := b.Navigate(base + "/figures?tenant=acme&" + win.query); st != http.StatusOK {
			t.Fatalf("%s: %d", win.name, st)
		}
		checkFiguresPage(t, b, rows, win.w)
		check(win.name)

		d := b.Download(browsertest.TestID("csv-link"))
		if !bytes.Equal(d.Body, raw) {
			t.Fatalf("%s: Chromium downloaded\n%s\nthe CSV `settle figures --csv` writes is\n%s", win.name, d.Body, raw)
		}
		name := "settle-figures-acme-" + win.w.Since.Format(time.DateOnly) + "-to-" +
			win.w.Until.AddDate(0, 0, -1).Format(time.DateOnly) + ".csv"
		q, _ := url.ParseQuery(win.query)
		q.Set("tenant", "acme")
		if href := base + "/figures.csv?" + q.Encode(); d.Name != name || d.URL != href {
			t.Fatalf("%s: downloaded %s from %s, want %s from %s", win.name, d.Name, d.URL, name, href)
		}
	}
	if n := b.Count(`form[method="post"]:not([action="/logout"])`); n != 0 {
		t.Fatalf("a manager is offered %d write forms", n)
	}
	// At 1280 px the cross-tenant overview fits without sideways scroll,
	// and a 90-day chart's date labels and values do not run together.
	b.Viewport(1280, 900)
	if st := b.Navigate(base + "/figures?window=90d"); st != http.StatusOK || b.ScrollsSideways() {
		t.Fatalf("the 90-day overview at 1280 px: %d, scrolls sideways %v", st, b.ScrollsSideways())
	}
	check("figures-overview-1280")
	if st := b.Navigate(base + "/figures?tenant=acme&window=90d"); st != http.StatusOK || b.ScrollsSideways() {
		t.Fatalf("90 days of acme at 1280 px: %d, scrolls sideways %v", st, b.ScrollsSideways())
	}
	if n := b.Count(`[data-testid="axis-date"]`); n < 2*4 {
		t.Fatalf("%d date labels on the 90-day charts", n)
	}
	if n := b.Overlaps(`[data-testid="axis-date"]`); n != 0 {
		t.Fatalf("%d pairs of date labels overlap on the 90-day charts", n)
	}
	if n := b.Overlaps(`[data-testid="bar-value"]`); n != 0 {
		t.Fatalf("%d pairs of bar values overlap on the 90-day charts", n)
	}
	check("figures-90-days-1280")
}

// globexUnknown gives globex one operation in UNKNOWN, so that the
// overview's two rows differ.
func globexUnknown(t *testing.T, s store) {
	t.Helper()
	ctx := context.Background()
	op, _, err := s.Create(ctx, ledger.NewOperation{Tenant: "globex", Type: "charge", IntentRef: "inv-2002",
		Target: "payments", Payload: []byte(`{"amount":100}`), RetryWindow: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if op, err = s.Claim(ctx, "globex", op.ID, op.PayloadHash, time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Record(ctx, ledger.Outcome{Tenant: "globex", OperationID: op.ID, Fence: op.Fence,
		From: ledger.InFlight, To: ledger.Unknown, Actor: ledger.ActorExecutor, Reason: "no response: timeout"}); err != nil {
		t.Fatal(err)
	}
}

// figureRows are the rows of a figures CSV by target ("" for the
// tenant-wide rows) and metric; a daily row's metric is "day|metric".
type figureRows map[string]map[string]string

// figuresCSV is what `settle figures --csv` prints for tenant and w:
// ledger.WriteFiguresCSV over ledger.Figures, and its rows.
func figuresCSV(t *testing.T, s store, tenant string, w ledger.Window) ([]byte, figureRows) {
	t.Helper()
	f, err := ledger.Figures(context.Background(), s, tenant, w)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := ledger.WriteFiguresCSV(&buf, f); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(buf.Bytes())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(recs[0], ",") != "tenant,target,day,metric,value,counts" {
		t.Fatalf("CSV header %q", recs[0])
	}
	rows := figureRows{}
	for _, r := range recs[1:] {
		if r[0] != tenant || len(r) != 6 || r[5] == "" {
			t.Fatalf("CSV row %q is not tenant,target,day,metric,value,counts of %s", r, tenant)
		}
		if rows[r[1]] == nil {
			rows[r[1]] = map[string]string{}
		}
		key := r[3]
		if r[2] != "" {
			key = r[2] + "|" + r[3]
		}
		rows[r[1]][key] = r[4]
	}
	return buf.Bytes(), rows
}

// targets are the CSV's targets.
func (r figureRows) targets() []string {
	var out []string
	for name := range r {
		if name != "" {
			out = append(out, name)
		}
	}
	return out
}

// entries sums a target's episodes started per day and counts the days
// with any.
func (r figureRows) entries(target string) (total, days int) {
	for m, v := range r[target] {
		if strings.HasSuffix(m, "|episodes_started") {
			n, _ := strconv.Atoi(v)
			total = total + n
			if n > 0 {
				days++
			}
		}
	}
	return total, days
}

// requireRich fails unless the CSV has something to compare in each
// measure: a page and a CSV that agree on zeros prove little.
func requireRich(t *testing.T, window string, r figureRows) {
	t.Helper()
	if len(r.targets()) != 2 {
		t.Fatalf("%s: targets %v, want payments and refunds", window, r.targets())
	}
	for _, target := range r.targets() {
		if _, days := r.entries(target); days < 2 {
			t.Fatalf("%s: %s has episodes on %d days", window, target, days)
		}
		if n, _ := strconv.Atoi(r[target]["resolved_automatically"]); n < 2 ||
			r[target]["resolved_automatically_median_ms"] == r[target]["resolved_automatically_worst_ms"] {
			t.Fatalf("%s: %s: %v", window, target, r[target])
		}
	}
	escalated, people := 0, 0
	for _, target := range r.targets() {
		n, _ := strconv.Atoi(r[target]["escalations"])
		escalated += n
		n, _ = strconv.Atoi(r[target]["resolved_by_people"])
		people += n
	}
	if escalated == 0 || people == 0 {
		t.Fatalf("%s: %d escalations, %d resolved by people", window, escalated, people)
	}
	for _, m := range []string{"open_escalations", "payload_conflicts", "duplicates"} {
		if n, _ := strconv.Atoi(r[""][m]); n == 0 {
			t.Fatalf("%s: %s is 0", window, m)
		}
	}
	if r[""]["oldest_open_escalation"] == "" {
		t.Fatalf("%s: no oldest open escalation", window)
	}
}

// checkFiguresPage reads every number of the figures page on b and
// compares it with the CSV's.
func checkFiguresPage(t *testing.T, b *browsertest.Browser, r figureRows, w ledger.Window) {
	t.Helper()
	since, _ := time.Parse(time.RFC3339, r[""]["since"])
	until, _ := time.Parse(time.RFC3339, r[""]["until"])
	if !since.Equal(w.Since) || !until.Equal(w.Until) {
		t.Fatalf("the CSV's window %s to %s, want %v", since, until, w)
	}
	days := w.Days()
	period := since.Format(time.DateOnly) + " to " + until.AddDate(0, 0, -1).Format(time.DateOnly) + " (UTC), " +
		strconv.Itoa(days) + " days"
	if got := b.TextByTestID("period"); got != period {
		t.Fatalf("period %q, the CSV's %q", got, period)
	}

	if n := b.Count(`[data-testid="target-figures"]`); n != len(r.targets()) {
		t.Fatalf("%d targets on the page, %d in the CSV", n, len(r.targets()))
	}
	for _, target := range r.targets() {
		sec := `[data-testid="target-figures"][data-target="` + target + `"] `
		cell := func(id string) string { t.Helper(); return b.Text(sec + browsertest.TestID(id)) }
		if n := b.Count(sec + `svg.chart[role="img"] rect.chart-bar`); n != 3*days {
			t.Fatalf("%s: %d bars, want %d", target, n, 3*days)
		}
		if n := b.Count(sec + `figcaption[data-testid="chart-title"]`); n != 3 {
			t.Fatalf("%s: %d visible chart titles, want 3", target, n)
		}
		rows := b.Count(sec+`[data-testid="day-row"]`) + b.Count(sec+`[data-testid="empty-days"]`)
		shown := 0
		for d := since; d.Before(until); d = d.AddDate(0, 0, 1) {
			day := d.Format(time.DateOnly)
			want := r[target][day+"|episodes_started"]
			if want == "" {
				t.Fatalf("%s: the CSV has no row for %s", target, day)
			}
			if b.Count(sec+`[data-day="`+day+`"]`) == 0 {
				if want != "0" || r[target][day+"|escalations"] != "0" || r[target][day+"|resolved"] != "0" {
					t.Fatalf("%s on %s: not in the table, the CSV has %s episodes", target, day, want)
				}
				continue
			}
			shown++
			for id, metric := range map[string]string{"day-count": "episodes_started", "day-escalated": "escalations", "day-resolved": "resolved"} {
				if got := b.Text(sec + `[data-day="` + day + `"] [data-testid="` + id + `"]`); got != r[target][day+"|"+metric] {
					t.Fatalf("%s on %s: %s %q, the CSV %q", target, day, id, got, r[target][day+"|"+metric])
				}
			}
			n := r[target][day+"|resolved"]
			if got, want := b.Text(sec+`[data-day="`+day+`"] [data-testid="day-median"]`), shownMillis(t, r[target][day+"|resolved_median_ms"], n); got != want {
				t.Fatalf("%s on %s: median %q, the CSV %q", target, day, got, want)
			}
		}
		if rows >= days && days > 3 && shown < days {
			t.Fatalf("%s: %d table rows for %d days, %d of them with entries: empty days are not collapsed", target, rows, days, shown)
		}
		total, _ := r.entries(target)
		for id, want := range map[string]string{"started": strconv.Itoa(total), "auto": r[target]["resolved_automatically"],
			"people": r[target]["resolved_by_people"], "escalated": r[target]["escalations"], "open": r[target]["open_escalations"]} {
			if got := cell(id); got != want {
				t.Fatalf("%s: %s %q, the CSV %q", target, id, got, want)
			}
		}
		for id, metric := range map[string]string{"auto-time": "resolved_automatically", "people-time": "resolved_by_people", "escalation-time": "escalation"} {
			n := r[target]["resolved_by_people"]
			if metric == "resolved_automatically" {
				n = r[target][metric]
			}
			want := "—"
			if n != "0" {
				want = shownMillis(t, r[target][metric+"_median_ms"], n) + " median, " + shownMillis(t, r[target][metric+"_worst_ms"], n) + " worst"
			}
			if got := cell(id); got != want {
				t.Fatalf("%s: %s %q, the CSV's %s", target, id, got, want)
			}
		}
	}

	for id, metric := range map[string]string{"open-escalations": "open_escalations",
		"payload-conflicts": "payload_conflicts", "duplicates": "duplicates"} {
		if got := b.TextByTestID("measure-" + id); got != r[""][metric] {
			t.Fatalf("%s %q, the CSV %q", id, got, r[""][metric])
		}
	}
	if got, want := b.TextByTestID("measure-oldest-escalation"), shownOldest(t, r[""]["oldest_open_escalation"]); !strings.HasSuffix(got, want) {
		t.Fatalf("oldest open escalation %q, the CSV's %q (%q)", got, r[""]["oldest_open_escalation"], want)
	}
}

// checkOverviewRow compares tenant's row of the overview on b with its
// CSV: counts summed over targets, the slowest target's medians, and the
// tenant-wide measures.
func checkOverviewRow(t *testing.T, b *browsertest.Browser, tenant string, r figureRows, w ledger.Window) {
	t.Helper()
	started, escalated, auto, people := 0, 0, 0, 0
	var autoMedian, peopleMedian int64
	for _, target := range r.targets() {
		n, _ := r.entries(target)
		started += n
		e, _ := strconv.Atoi(r[target]["escalations"])
		escalated += e
		if n, _ := strconv.Atoi(r[target]["resolved_automatically"]); n > 0 {
			auto += n
			m, _ := strconv.ParseInt(r[target]["resolved_automatically_median_ms"], 10, 64)
			autoMedian = max(autoMedian, m)
		}
		if n, _ := strconv.Atoi(r[target]["resolved_by_people"]); n > 0 {
			people += n
			m, _ := strconv.ParseInt(r[target]["resolved_by_people_median_ms"], 10, 64)
			peopleMedian = max(peopleMedian, m)
		}
	}
	row := `[data-testid="overview-row"][data-tenant="` + tenant + `"] `
	for id, want := range map[string]string{
		"started":       strconv.Itoa(started),
		"auto":          strconv.Itoa(auto),
		"auto-median":   shownMillis(t, strconv.FormatInt(autoMedian, 10), strconv.Itoa(auto)),
		"people":        strconv.Itoa(people),
		"people-median": shownMillis(t, strconv.FormatInt(peopleMedian, 10), strconv.Itoa(people)),
		"escalated":     strconv.Itoa(escalated),
		"open":          r[""]["open_escalations"],
		"conflicts":     r[""]["payload_conflicts"],
		"duplicates":    r[""]["duplicates"],
	} {
		if got := b.Text(row + browsertest.TestID(id)); got != want {
			t.Fatalf("overview %s: %s %q, its CSV says %q", tenant, id, got, want)
		}
	}
	if got, want := b.Text(row+browsertest.TestID("oldest")), shownOldest(t, r[""]["oldest_open_escalation"]); !strings.HasSuffix(got, want) {
		t.Fatalf("overview %s: oldest %q, its CSV %q", tenant, got, want)
	}
}

// shownMillis is how the page shows a CSV time (whole milliseconds):
// ledger.FigureDuration, and "—" when nothing was resolved.
func shownMillis(t *testing.T, ms, resolved string) string {
	t.Helper()
	if resolved == "0" {
		return "—"
	}
	n, err := strconv.ParseInt(ms, 10, 64)
	if err != nil {
		t.Fatalf("CSV milliseconds %q: %v", ms, err)
	}
	return ledger.FigureDuration(time.Duration(n) * time.Millisecond)
}

// shownOldest is how the page ends its text for the CSV's oldest open
// escalation (RFC 3339): the minute in UTC, in brackets, after how long
// ago it was; "none" when there is none.
func shownOldest(t *testing.T, rfc3339 string) string {
	t.Helper()
	if rfc3339 == "" {
		return "none"
	}
	at, err := time.Parse(time.RFC3339, rfc3339)
	if err != nil {
		t.Fatalf("CSV oldest %q: %v", rfc3339, err)
	}
	return "(" + at.UTC().Format("2006-01-02 15:04 UTC") + ")"
}
