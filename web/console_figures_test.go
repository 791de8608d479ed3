package web_test

import (
	"bytes"
	"context"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"settle/auth"
	"settle/ledger"
	"settle/web"
)

func init() {
	// A manager of every tenant, for the overview of several tenants.
	principals["manager-all"] = &auth.Principal{Subject: "demo:max", Name: "Max Manager",
		Bindings: []auth.Binding{{Role: auth.Manager}}}
}

// figuresConsole is the console with a richer acme history: one operation
// pending, one escalated (an UNKNOWN episode that ended), and one refused
// payload conflict.
func figuresConsole(t *testing.T, s store) *console {
	t.Helper()
	c := newConsole(t, s, web.Config{})
	ctx := context.Background()
	op := c.pending("acme", "inv-1002")
	if _, err := s.Record(ctx, ledger.Outcome{Tenant: "acme", OperationID: op.ID, Fence: op.Fence,
		From: ledger.Unknown, To: ledger.Escalated, Actor: ledger.ActorReconciler, Reason: "deadline passed"}); err != nil {
		t.Fatal(err)
	}
	_, _, err := s.Create(ctx, ledger.NewOperation{Tenant: "acme", Type: "charge", IntentRef: "inv-1001",
		Target: "payments", Payload: []byte(`{"amount":999}`), RetryWindow: 24 * time.Hour})
	if ledger.ErrorCode(err) != ledger.EPayloadConflict {
		t.Fatalf("conflict: %v", err)
	}
	return c
}

var (
	barRe   = regexp.MustCompile(`<rect class="chart-bar"`)
	dayRe   = regexp.MustCompile(`data-testid="day-row" data-day="([0-9-]+)"><th scope="row">[0-9-]+</th><td data-testid="day-count">([0-9]+)</td>`)
	emptyRe = regexp.MustCompile(`data-testid="empty-days"><th scope="row">([0-9-]+) to ([0-9-]+) \(([0-9]+) days\)</th>`)
)

// The manager's page: three charts per target (episodes started, time to
// a final outcome, escalations), each with a visible title, one bar per
// day, a date axis and the values; the per-day table with runs of empty
// days collapsed; every measure labelled; and the CSV of exactly the
// numbers ledger.Figures computes, with its header and every day of the
// window, written as `settle figures --csv` writes them.
func TestConsole_Figures(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		s := open(t)
		c := figuresConsole(t, s)
		w := ledger.DaysEnding(time.Now(), 7)
		want, err := ledger.Figures(context.Background(), s, "acme", w)
		if err != nil {
			t.Fatal(err)
		}
		// The escalated operation waits on people: it is resolved
		// neither automatically nor by people, and it is open.
		if len(want.Targets) != 1 || want.Targets[0].Resolved() != 0 || want.Targets[0].OpenEscalations != 1 ||
			want.OpenEscalations != 1 || want.PayloadConflicts != 1 || want.Targets[0].Escalated != 1 {
			t.Fatalf("fixture figures: %+v", want)
		}
		b := c.as("manager")
		r := b.get("/figures?tenant=acme&window=7d")
		if r.status != http.StatusOK {
			t.Fatalf("figures: %d %s", r.status, r.body)
		}
		if n := len(barRe.FindAll(r.body, -1)); n != 3*7 {
			t.Errorf("%d bars, want 21 (one a day in three charts)", n)
		}
		for _, want := range []string{`<svg class="chart" role="img" aria-labelledby="chart-0" aria-describedby="chart-0-desc"`,
			`data-testid="chart-title">Operations of payments whose outcome became uncertain, per day</figcaption>`,
			`data-testid="chart-title">Median time to a final outcome of payments, per day resolved</figcaption>`,
			`data-testid="chart-title">Escalations to people for payments, per day</figcaption>`,
			`<desc id="chart-2-desc">Escalations to people for payments, per day, ` + w.Since.Format(time.DateOnly)} {
			if !bytes.Contains(r.body, []byte(want)) {
				t.Errorf("the page lacks %s", want)
			}
		}
		if n := bytes.Count(r.body, []byte(`data-testid="axis-date"`)); n < 6 {
			t.Errorf("%d dates on the axes, want at least the first and last of each chart", n)
		}
		if !bytes.Contains(r.body, []byte(`data-testid="bar-value">2</text>`)) || !bytes.Contains(r.body, []byte(`data-testid="bar-value">1</text>`)) {
			t.Errorf("the bars' values are not labelled")
		}
		covered, total := 0, 0
		for _, d := range dayRe.FindAllSubmatch(r.body, -1) {
			covered++
			if got, want := string(d[2]), strconv.Itoa(want.Targets[0].StartedPerDay[string(d[1])]); got != want {
				t.Errorf("day %s: table says %s, ledger %s", d[1], got, want)
			}
			total += want.Targets[0].StartedPerDay[string(d[1])]
		}
		for _, e := range emptyRe.FindAllSubmatch(r.body, -1) {
			n, _ := strconv.Atoi(string(e[3]))
			covered += n
		}
		if total != 2 || covered != 7 {
			t.Errorf("%d episodes in the table over %d days, want 2 over 7", total, covered)
		}
		for id, text := range map[string]string{"started": "2", "auto": "0", "people": "0", "people-time": "—",
			"escalated": "1", "open": "1", "oldest": "escalated ",
			"measure-open-escalations": "1", "measure-payload-conflicts": "1", "measure-duplicates": "0"} {
			if !testid(r.body, id, text) {
				t.Errorf("page lacks %s %q", id, text)
			}
		}
		for _, label := range []string{"Resolved automatically: reached a final outcome without people",
			"Resolved by people: time the escalation took (escalated to final outcome)", "Escalations still open now, waiting on people"} {
			if !bytes.Contains(r.body, []byte(label)) {
				t.Errorf("no measure labelled %q", label)
			}
		}
		if !bytes.Contains(r.body, []byte(`href="/figures"`)) {
			t.Error("no Figures entry in the navigation")
		}

		csv := b.get("/figures.csv?tenant=acme&window=7d")
		if csv.status != http.StatusOK || csv.header.Get("Content-Type") != "text/csv; charset=utf-8" ||
			!strings.HasPrefix(csv.header.Get("Content-Disposition"), `attachment; filename="settle-figures-acme-`) {
			t.Fatalf("csv: %d %v", csv.status, csv.header)
		}
		var wantCSV bytes.Buffer
		if err := ledger.WriteFiguresCSV(&wantCSV, want); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(csv.body, wantCSV.Bytes()) {
			t.Fatalf("csv:\n%s\nwant:\n%s", csv.body, wantCSV.Bytes())
		}
		if !bytes.HasPrefix(csv.body, []byte("tenant,target,day,metric,value,counts\n")) ||
			!bytes.Contains(csv.body, []byte("acme,,,payload_conflicts,1,")) ||
			bytes.Count(csv.body, []byte(",episodes_started,")) != 7+1 ||
			!bytes.Contains(csv.body, []byte("acme,payments,"+w.Since.Format(time.DateOnly)+",episodes_started,0,")) {
			t.Errorf("the csv lacks its header, the conflict or a row for every day (zero days too): %s", csv.body)
		}
		// A link to the CSV of the same window is on the page.
		if !bytes.Contains(r.body, []byte(`href="/figures.csv?tenant=acme&amp;window=7d"`)) {
			t.Errorf("no CSV link for the window")
		}
	})
}

// The overview's CSV: every tenant the manager may read, under one
// header, each as /figures.csv writes it; the same permission.
func TestConsole_FiguresOverviewCSV(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		s := open(t)
		c := figuresConsole(t, s)
		w := ledger.DaysEnding(time.Now(), 30)
		all, err := ledger.FiguresOf(context.Background(), s, []string{"acme", "globex"}, w)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := ledger.WriteFiguresCSV(&want, all...); err != nil {
			t.Fatal(err)
		}
		ov := c.as("manager-all").get("/figures/overview")
		if !bytes.Contains(ov.body, []byte(`href="/figures/overview.csv?window=30d"`)) {
			t.Errorf("no CSV link on the overview: %s", ov.body)
		}
		r := c.as("manager-all").get("/figures/overview.csv?window=30d")
		if r.status != http.StatusOK || !bytes.Equal(r.body, want.Bytes()) ||
			!strings.Contains(r.header.Get("Content-Disposition"), `settle-figures-all-tenants-`) {
			t.Fatalf("overview csv %d %v\n%s\nwant\n%s", r.status, r.header, r.body, want.Bytes())
		}
		if n := bytes.Count(r.body, []byte("tenant,target,day,metric,value,counts\n")); n != 1 ||
			!bytes.Contains(r.body, []byte("\nglobex,,,duplicates,")) || !bytes.Contains(r.body, []byte("\nacme,,,duplicates,")) {
			t.Errorf("the overview csv has %d headers or lacks a tenant:\n%s", n, r.body)
		}
		one := c.as("manager").get("/figures/overview.csv")
		if one.status != http.StatusOK || bytes.Contains(one.body, []byte("globex")) || !bytes.Contains(one.body, []byte("\nacme,")) {
			t.Errorf("a manager of acme: %d\n%s", one.status, one.body)
		}
		if r := c.as("support").get("/figures/overview.csv"); r.status != http.StatusForbidden {
			t.Errorf("support: %d", r.status)
		}
	})
}

// Who may read figures: managers of the tenant; support is refused, and
// another tenant reads like one that does not exist.
func TestConsole_FiguresAccess(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{})
		for _, tc := range []struct {
			who, path string
			want      int
		}{
			{"manager", "/figures?tenant=acme", http.StatusOK},
			{"manager", "/figures", http.StatusOK}, // the only tenant
			{"support", "/figures?tenant=acme", http.StatusForbidden},
			{"support", "/figures.csv?tenant=acme", http.StatusForbidden},
			{"support", "/figures/overview", http.StatusForbidden},
			{"support", "/figures/overview.csv", http.StatusForbidden},
			{"owner", "/figures?tenant=acme", http.StatusForbidden},
			{"manager", "/figures?tenant=globex", http.StatusNotFound},
			{"manager", "/figures.csv?tenant=globex", http.StatusNotFound},
			{"manager", "/figures?tenant=nosuch", http.StatusNotFound},
			{"manager-all", "/figures", http.StatusSeeOther}, // several tenants: the overview
			{"manager-all", "/figures?tenant=globex", http.StatusOK},
		} {
			if r := c.as(tc.who).get(tc.path); r.status != tc.want {
				t.Errorf("%s %s: %d, want %d", tc.who, tc.path, r.status, tc.want)
			}
		}
		b := c.as("manager")
		b.token() // settle the CSRF cookie, so every page carries the same token
		unknown, other := b.get("/figures?tenant=nosuch"), b.get("/figures?tenant=globex")
		if !bytes.Equal(unknown.body, other.body) || bytes.Contains(other.body, []byte("globex")) {
			t.Errorf("another tenant's figures answer unlike an unknown tenant's:\n%s\n---\n%s", other.body, unknown.body)
		}
	})
}

// The overview: one row per tenant with a sparkline, sorted through the URL.
func TestConsole_FiguresOverview(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := figuresConsole(t, open(t))
		b := c.as("manager-all")
		rowRe := regexp.MustCompile(`data-testid="overview-row" data-tenant="([^"]+)"`)
		order := func(path string) []string {
			r := b.get(path)
			if r.status != http.StatusOK {
				t.Fatalf("%s: %d %s", path, r.status, r.body)
			}
			if n := bytes.Count(r.body, []byte(`data-testid="sparkline"`)); n != 2 {
				t.Errorf("%s: %d sparklines, want 2", path, n)
			}
			var out []string
			for _, m := range rowRe.FindAllSubmatch(r.body, -1) {
				out = append(out, string(m[1]))
			}
			return out
		}
		for path, want := range map[string]string{
			"/figures/overview":                                      "acme globex",
			"/figures/overview?sort=tenant&dir=desc":                 "globex acme",
			"/figures/overview?sort=started&dir=desc&window=7d":      "acme globex",
			"/figures/overview?sort=started&dir=asc":                 "globex acme",
			"/figures/overview?sort=open&dir=desc":                   "acme globex",
			"/figures/overview?sort=conflicts&dir=asc&window=90d":    "globex acme",
			"/figures/overview?sort=nonsense&dir=sideways&window=1y": "acme globex",
		} {
			if got := strings.Join(order(path), " "); got != want {
				t.Errorf("%s: %s, want %s", path, got, want)
			}
		}
		r := c.as("manager").get("/figures/overview")
		if n := bytes.Count(r.body, []byte(`data-testid="overview-row"`)); r.status != http.StatusOK || n != 1 {
			t.Errorf("a manager of acme sees %d rows (%d)", n, r.status)
		}
		if !testid(r.body, "started", "2") || !testid(r.body, "open", "1") || !testid(r.body, "people-median", "—") || !testid(r.body, "conflicts", "1") {
			t.Errorf("overview numbers: %s", r.body)
		}
	})
}

// The window is whole UTC days; a from date replaces it; nonsense falls
// back to 30 days and says so.
func TestConsole_FiguresWindow(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{})
		b := c.as("manager")
		today := time.Now().UTC()
		from := today.AddDate(0, 0, -2).Format(time.DateOnly)
		for path, bars := range map[string]int{
			"/figures?tenant=acme&window=90d":                                                           90,
			"/figures?tenant=acme":                                                                      30,
			"/figures?tenant=acme&from=" + from:                                                         3,
			"/figures?tenant=acme&window=1y":                                                            30,
			"/figures?tenant=acme&from=2001-01-01":                                                      30,
			"/figures?tenant=acme&from=" + from + "&to=" + from:                                         1,
			"/figures?tenant=acme&from=" + from + "&to=" + today.Format(time.DateOnly):                  3,
			"/figures?tenant=acme&from=2026-01-01&to=2026-01-31":                                        31,
			"/figures?tenant=acme&to=" + from:                                                           30,
			"/figures?tenant=acme&from=2026-01-31&to=2026-01-01":                                        30,
			"/figures?tenant=acme&from=" + from + "&to=" + today.AddDate(0, 0, 1).Format(time.DateOnly): 30,
			"/figures?tenant=acme&from=2026-01-01&to=nope":                                              30,
		} {
			r := b.get(path)
			// The history is today's: a window ending earlier has no
			// target, so no chart, and only its period tells its days.
			if !bytes.Contains(r.body, []byte(" (UTC), "+strconv.Itoa(bars)+" day")) {
				t.Errorf("%s: the period is not %d days", path, bars)
			}
			if n := len(barRe.FindAll(r.body, -1)); r.status != http.StatusOK || (n != 3*bars && n != 0) {
				t.Errorf("%s: %d, %d bars, want %d", path, r.status, n, bars)
			}
		}
		if r := b.get("/figures?tenant=acme&window=1y"); !testid(r.body, "figures-problem", "Unknown window") {
			t.Error("an unknown window is not reported")
		}
		if r := b.get("/figures?tenant=acme&from=2026-01-31&to=2026-01-01"); !testid(r.body, "figures-problem", "The dates must be days") {
			t.Error("a window ending before it begins is not reported")
		}
		r := b.get("/figures?tenant=acme&from=2026-01-01&to=2026-01-31")
		for _, want := range []string{`value="2026-01-01" data-testid="from-date"`, `value="2026-01-31" data-testid="to-date"`,
			`<label for="to">`, `href="/figures.csv?from=2026-01-01&amp;tenant=acme&amp;to=2026-01-31"`} {
			if !bytes.Contains(r.body, []byte(want)) {
				t.Errorf("the dated page lacks %s", want)
			}
		}
	})
}

// A window that ends in the past counts only its own days: the history of
// today is outside a window ending yesterday, inside one ending today, and
// the page and its CSV say the same as ledger.Figures for that window.
func TestConsole_FiguresPastWindow(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		s := open(t)
		c := figuresConsole(t, s)
		b := c.as("manager")
		today := time.Now().UTC()
		from := today.AddDate(0, 0, -3).Format(time.DateOnly)
		for _, tc := range []struct {
			to                 string
			bars               int
			unknown, conflicts string
		}{
			// Before today: no episode, but the target's open escalation
			// (a figure of now) still lists it, with three empty charts.
			{today.AddDate(0, 0, -1).Format(time.DateOnly), 3 * 3, "0", "0"},
			{today.Format(time.DateOnly), 3 * 4, "2", "1"},
		} {
			q := "?tenant=acme&from=" + from + "&to=" + tc.to
			r := b.get("/figures" + q)
			if n := len(barRe.FindAll(r.body, -1)); r.status != http.StatusOK || n != tc.bars {
				t.Fatalf("%s: %d, %d bars, want %d", q, r.status, n, tc.bars)
			}
			if !testid(r.body, "measure-payload-conflicts", tc.conflicts) || !testid(r.body, "started", tc.unknown) || !testid(r.body, "open", "1") {
				t.Errorf("%s: conflicts or UNKNOWN entries wrong, want %s and %s: %s", q, tc.conflicts, tc.unknown, r.body)
			}
			w, err := ledger.DatesEnding(from, tc.to, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			want, err := ledger.Figures(context.Background(), s, "acme", w)
			if err != nil {
				t.Fatal(err)
			}
			var wantCSV bytes.Buffer
			if err := ledger.WriteFiguresCSV(&wantCSV, want); err != nil {
				t.Fatal(err)
			}
			csv := b.get("/figures.csv" + q)
			if csv.status != http.StatusOK || !bytes.Equal(csv.body, wantCSV.Bytes()) {
				t.Fatalf("%s: csv %d\n%s\nwant\n%s", q, csv.status, csv.body, wantCSV.Bytes())
			}
			if !bytes.Contains(csv.body, []byte("acme,,,until,"+w.Until.Format(time.RFC3339)+",")) ||
				!strings.Contains(csv.header.Get("Content-Disposition"), from+"-to-"+tc.to+".csv") {
				t.Errorf("%s: the csv does not name its window: %v\n%s", q, csv.header, csv.body)
			}
			if len(want.Targets) != 1 || want.Targets[0].OpenEscalations != 1 || strconv.Itoa(len(want.Targets[0].StartedPerDay)) != map[string]string{"0": "0", "2": "1"}[tc.unknown] {
				t.Errorf("%s: targets %+v", q, want.Targets)
			}
		}
		ov := b.get("/figures/overview?from=" + from + "&to=" + today.AddDate(0, 0, -1).Format(time.DateOnly))
		if ov.status != http.StatusOK || !testid(ov.body, "conflicts", "0") {
			t.Errorf("overview of a past window: %d %s", ov.status, ov.body)
		}
	})
}
