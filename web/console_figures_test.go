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
	barRe = regexp.MustCompile(`<rect class="chart-bar"`)
	dayRe = regexp.MustCompile(`data-testid="day-row" data-day="([0-9-]+)"><th scope="row">[0-9-]+</th><td data-testid="day-count">([0-9]+)</td>`)
)

// The manager's page: one bar per day of the window for each target, a
// table of the same numbers beside it, and the CSV of exactly the numbers
// ledger.Figures computes, written as `settle figures --csv` writes them.
func TestConsole_Figures(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		s := open(t)
		c := figuresConsole(t, s)
		want, err := ledger.Figures(context.Background(), s, "acme", ledger.DaysEnding(time.Now(), 7))
		if err != nil {
			t.Fatal(err)
		}
		if len(want.Targets) != 1 || want.Targets[0].Resolved != 1 || want.OpenEscalations != 1 || want.PayloadConflicts != 1 {
			t.Fatalf("fixture figures: %+v", want)
		}
		b := c.as("manager")
		r := b.get("/figures?tenant=acme&window=7d")
		if r.status != http.StatusOK {
			t.Fatalf("figures: %d %s", r.status, r.body)
		}
		if n := len(barRe.FindAll(r.body, -1)); n != 7 {
			t.Errorf("%d bars, want 7 (one a day)", n)
		}
		if !bytes.Contains(r.body, []byte(`<svg class="chart" role="img" aria-labelledby="chart-0"`)) {
			t.Errorf("no accessible chart: %s", r.body)
		}
		days := dayRe.FindAllSubmatch(r.body, -1)
		if len(days) != 7 {
			t.Fatalf("%d table rows, want 7", len(days))
		}
		total := 0
		for _, d := range days {
			if got, want := string(d[2]), strconv.Itoa(want.Targets[0].UnknownPerDay[string(d[1])]); got != want {
				t.Errorf("day %s: table says %s, ledger %s", d[1], got, want)
			}
			total += want.Targets[0].UnknownPerDay[string(d[1])]
		}
		if total != 2 {
			t.Errorf("%d UNKNOWN entries in the table, want 2", total)
		}
		for id, text := range map[string]string{"total": "2", "resolved": "1", "escalated": "1",
			"measure-open-escalations": "1", "measure-payload-conflicts": "1", "measure-duplicates": "0"} {
			if !testid(r.body, id, text) {
				t.Errorf("page lacks %s %q", id, text)
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
		if !bytes.Contains(csv.body, []byte("acme,,payload_conflicts,1\n")) {
			t.Errorf("csv lacks the conflict: %s", csv.body)
		}
		// A link to the CSV of the same window is on the page.
		if !bytes.Contains(r.body, []byte(`href="/figures.csv?tenant=acme&amp;window=7d"`)) {
			t.Errorf("no CSV link for the window")
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
			"/figures/overview?sort=unknown&dir=desc&window=7d":      "acme globex",
			"/figures/overview?sort=unknown&dir=asc":                 "globex acme",
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
		if !testid(r.body, "unknown", "2") || !testid(r.body, "conflicts", "1") {
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
			if n := len(barRe.FindAll(r.body, -1)); r.status != http.StatusOK || (n != bars && n != 0) {
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
			{today.AddDate(0, 0, -1).Format(time.DateOnly), 0, "0", "0"}, // no target: no chart
			{today.Format(time.DateOnly), 4, "2", "1"},
		} {
			q := "?tenant=acme&from=" + from + "&to=" + tc.to
			r := b.get("/figures" + q)
			if n := len(barRe.FindAll(r.body, -1)); r.status != http.StatusOK || n != tc.bars {
				t.Fatalf("%s: %d, %d bars, want %d", q, r.status, n, tc.bars)
			}
			if !testid(r.body, "measure-payload-conflicts", tc.conflicts) || (tc.unknown != "0" && !testid(r.body, "total", tc.unknown)) {
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
			if !bytes.Contains(csv.body, []byte("acme,,until,"+w.Until.Format(time.RFC3339)+"\n")) ||
				!strings.Contains(csv.header.Get("Content-Disposition"), from+"-to-"+tc.to+".csv") {
				t.Errorf("%s: the csv does not name its window: %v\n%s", q, csv.header, csv.body)
			}
			if tc.unknown == "0" && len(want.Targets) != 0 {
				t.Errorf("%s: targets outside the window: %+v", q, want.Targets)
			}
		}
		ov := b.get("/figures/overview?from=" + from + "&to=" + today.AddDate(0, 0, -1).Format(time.DateOnly))
		if ov.status != http.StatusOK || !testid(ov.body, "conflicts", "0") {
			t.Errorf("overview of a past window: %d %s", ov.status, ov.body)
		}
	})
}
