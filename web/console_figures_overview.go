package web

import (
	"bytes"
	"cmp"
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"settle/auth"
	"settle/ledger"
	"settle/views"
)

// overviewColumns are the overview's sortable columns, each named by what
// it counts, and the tenant.
var overviewColumns = []struct {
	id, label string
	less      func(a, b overviewEntry) int
}{
	{"tenant", "Tenant", func(a, b overviewEntry) int { return strings.Compare(a.f.Tenant, b.f.Tenant) }},
	{"started", "Became uncertain", func(a, b overviewEntry) int { return a.started - b.started }},
	{"auto", "Resolved automatically", func(a, b overviewEntry) int { return a.auto - b.auto }},
	{"auto-median", "Median, automatic (slowest target)", func(a, b overviewEntry) int { return cmpDur(a.autoMedian, b.autoMedian) }},
	{"people", "Resolved by people", func(a, b overviewEntry) int { return a.people - b.people }},
	{"people-median", "Median, by people (slowest target)", func(a, b overviewEntry) int { return cmpDur(a.peopleMedian, b.peopleMedian) }},
	{"escalated", "Escalations", func(a, b overviewEntry) int { return a.escalated - b.escalated }},
	{"open", "Still open", func(a, b overviewEntry) int { return a.f.OpenEscalations - b.f.OpenEscalations }},
	{"oldest", "Oldest open", func(a, b overviewEntry) int { return cmpOldest(a.f.OldestEscalation, b.f.OldestEscalation) }},
	{"conflicts", "Payload conflicts", func(a, b overviewEntry) int { return a.f.PayloadConflicts - b.f.PayloadConflicts }},
	{"duplicates", "Duplicates (audit)", func(a, b overviewEntry) int { return a.f.Duplicates - b.f.Duplicates }},
}

func cmpDur(a, b time.Duration) int { return cmp.Compare(a, b) }

// cmpOldest orders an older escalation first as "more": none is least.
func cmpOldest(a, b *time.Time) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	return b.Compare(*a)
}

// overviewEntry is one tenant's figures with the tenant-wide sums the
// overview shows and sorts by.
type overviewEntry struct {
	f                        ledger.TenantFigures
	started, escalated       int
	auto, people             int
	autoMedian, peopleMedian time.Duration
	perDay                   []int
}

// summarize sums a tenant's per-target figures. An exact median across
// targets would need every duration, so the overview shows the highest
// per-target median, the figure a manager acts on (the tenant's page has
// each target's).
func summarize(f ledger.TenantFigures, days []string) overviewEntry {
	e := overviewEntry{f: f, perDay: make([]int, len(days))}
	for _, t := range f.Targets {
		e.escalated += t.Escalated
		e.auto += t.Automatic.Count
		e.people += t.ByPeople.Count
		if t.Automatic.Count > 0 {
			e.autoMedian = max(e.autoMedian, t.Automatic.Median)
		}
		if t.ByPeople.Count > 0 {
			e.peopleMedian = max(e.peopleMedian, t.ByPeople.Median)
		}
		for i, d := range days {
			e.perDay[i] += t.StartedPerDay[d]
			e.started += t.StartedPerDay[d]
		}
	}
	return e
}

func (fg *figures) figuresOverview(c echo.Context) error {
	q, all, err := fg.overviewFigures(c)
	if err != nil {
		return err
	}
	days := windowDays(q.Span.Since, q.Days)
	entries := make([]overviewEntry, 0, len(all))
	for _, f := range all {
		entries = append(entries, summarize(f, days))
	}
	v := overviewView(entries, q, days, fg.now())
	v.Layout = fg.layout(c, "Figures for all my tenants", "figures")
	v.ServedIn = servedIn(c)
	return fg.render(c, http.StatusOK, views.FiguresOverviewPage(v))
}

// figuresOverviewCSV is the overview's tenants and window as CSV, every
// tenant's rows as /figures.csv writes them, under one header.
func (fg *figures) figuresOverviewCSV(c echo.Context) error {
	q, all, err := fg.overviewFigures(c)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := ledger.WriteFiguresCSV(&buf, all...); err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set(echo.HeaderCacheControl, "no-store")
	h.Set(echo.HeaderContentDisposition, `attachment; filename="`+csvName("all-tenants", q.Span)+`"`)
	return c.Blob(http.StatusOK, "text/csv; charset=utf-8", buf.Bytes())
}

// overviewFigures reads the query of an overview request and the figures
// of every tenant the principal may read, in the order of tenants.
func (fg *figures) overviewFigures(c echo.Context) (figuresQuery, []ledger.TenantFigures, error) {
	ctx := c.Request().Context()
	vals := c.QueryParams()
	q := parseFiguresQuery(vals, fg.now())
	q.Tenant = ""
	q.sort, q.dir = "tenant", "asc"
	for _, col := range overviewColumns {
		if col.id == vals.Get("sort") {
			q.sort = col.id
		}
	}
	if vals.Get("dir") == "desc" {
		q.dir = "desc"
	}
	tenants, err := fg.figureTenants(ctx, auth.FromContext(ctx))
	if err != nil {
		return q, nil, err
	}
	all, err := ledger.FiguresOf(ctx, fg.store, tenants, q.Span)
	return q, all, err
}

// figureTenants are the tenants whose figures p may read: its bound
// tenants, or, for a binding to every tenant, every tenant the ledger
// knows.
func (fg *figures) figureTenants(ctx context.Context, p *auth.Principal) ([]string, error) {
	all, tenants := p.Tenants(auth.ViewFigures)
	if !all {
		return tenants, nil
	}
	return fg.store.Tenants(ctx)
}

func overviewView(entries []overviewEntry, q figuresQuery, days []string, now time.Time) views.FiguresOverview {
	for _, col := range overviewColumns {
		if col.id == q.sort {
			slices.SortStableFunc(entries, func(a, b overviewEntry) int {
				if c := col.less(a, b); c != 0 {
					if q.dir == "desc" {
						return -c
					}
					return c
				}
				return strings.Compare(a.f.Tenant, b.f.Tenant)
			})
		}
	}
	v := views.FiguresOverview{Windows: windowTabs("/figures/overview", q, ""),
		Period:  days[0] + " to " + days[len(days)-1] + " (UTC), " + figPlural(q.Days, "day"),
		Empty:   "You have no tenant to show figures for.",
		CSVHref: "/figures/overview.csv?" + figuresQuery{Window: q.Window, From: q.From, To: q.To}.params("").Encode()}
	for _, col := range overviewColumns {
		link := q
		link.sort, link.dir = col.id, "asc"
		sl := views.SortLink{ID: col.id, Label: col.label}
		if q.sort == col.id {
			sl.Sort = "ascending"
			if q.dir == "asc" {
				link.dir = "desc"
			} else {
				sl.Sort = "descending"
			}
		}
		sl.Href = "/figures/overview?" + link.params("").Encode()
		v.Columns = append(v.Columns, sl)
	}
	for _, e := range entries {
		name := ledger.PlainText(e.f.Tenant, 63)
		v.Rows = append(v.Rows, views.OverviewRow{Tenant: name,
			Href:    "/figures?" + figuresQuery{Window: q.Window, From: q.From, To: q.To}.params(e.f.Tenant).Encode(),
			Started: figN(e.started), Auto: figN(e.auto), AutoMedian: resolutionText(e.autoMedian, e.auto),
			People: figN(e.people), PeopleMedian: resolutionText(e.peopleMedian, e.people),
			Escalated: figN(e.escalated), Open: figN(e.f.OpenEscalations), Oldest: oldestText(e.f.OldestEscalation, now),
			Conflicts: figN(e.f.PayloadConflicts), Duplicates: figN(e.f.Duplicates),
			Spark: sparkline("Operations of "+name+" whose outcome became uncertain, per day", e.perDay)})
	}
	return v
}
