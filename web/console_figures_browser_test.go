package web_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"settle/auth/oidctest"
	"settle/ledger"
	"settle/ledger/storetest"
	"settle/web"
)

// TestConsole_FiguresBrowser is a manager's visit in headless Chromium: the
// figures page shows the SVG chart, its table's numbers are the CSV's
// (the writer `settle figures --csv` uses), the download link is there,
// and the overview lists the tenants; every page passes axe.
func TestConsole_FiguresBrowser(t *testing.T) {
	t.Parallel()
	s := storetest.Postgres().New(t, time.Now).(store)
	c, prov := oidcConsole(t, s, web.Config{}, `  - group: managers
    role: manager
    tenants: [acme, globex]
`,
		oidctest.User{Subject: "mia-3", Name: "Mia Manager", Email: "mia@example.test", Groups: []string{"managers"}})
	base := c.base
	c.pending("acme", "inv-1001")
	c.pending("acme", "inv-1003")
	c.create("globex", "inv-2002")

	b, check := visit(t)
	prov.SignInAs(t, "mia-3")
	if st := b.Navigate(base + "/figures"); st != http.StatusOK {
		t.Fatalf("figures after sign-in: %d", st)
	}
	if n := b.Count(`[data-testid="overview-row"]`); n != 2 {
		t.Fatalf("a manager of two tenants sees %d overview rows, want 2", n)
	}
	if n := b.Count(`svg.sparkline[role="img"]`); n != 2 {
		t.Fatalf("%d sparklines", n)
	}
	check("figures-overview")

	if st := b.Navigate(base + "/figures?tenant=acme&window=7d"); st != http.StatusOK {
		t.Fatalf("figures: %d", st)
	}
	if n := b.Count(`svg.chart[role="img"] rect.chart-bar`); n != 7 {
		t.Fatalf("%d bars, want 7", n)
	}
	check("figures")

	f, err := ledger.Figures(context.Background(), s, "acme", ledger.DaysEnding(time.Now(), 7))
	if err != nil {
		t.Fatal(err)
	}
	var csv bytes.Buffer
	if err := ledger.WriteFiguresCSV(&csv, f); err != nil {
		t.Fatal(err)
	}
	today := time.Now().UTC().Format(time.DateOnly)
	row := "acme,payments,unknown_entries:" + today + ",2"
	if !strings.Contains(csv.String(), row) {
		t.Fatalf("CSV lacks %q:\n%s", row, csv.String())
	}
	if got := b.Text(`[data-day="` + today + `"] [data-testid="day-count"]`); got != "2" {
		t.Fatalf("the table says %q for today, the CSV 2", got)
	}
	if got := b.TextByTestID("total"); got != "2" {
		t.Fatalf("total %q", got)
	}
	// The download link is for the same window (TestConsole_Figures checks
	// that it answers this CSV as an attachment; Chromium downloads it
	// instead of loading a page).
	if n := b.Count(`a[data-testid="csv-link"][download][href="/figures.csv?tenant=acme&window=7d"]`); n != 1 {
		t.Fatal("no CSV link for the window")
	}
	if n := b.Count(`form[method="post"]:not([action="/logout"])`); n != 0 {
		t.Fatalf("a manager is offered %d write forms", n)
	}
}
