package web

import (
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

// overviewColumns are the overview's sortable columns: the five measures
// (time to resolution as median and worst, escalations as the count and
// the oldest open one) and the tenant.
var overviewColumns = []struct {
	id, label string
	less      func(a, b overviewEntry) int
}{
	{"tenant", "Tenant", func(a, b overviewEntry) int { return strings.Compare(a.f.Tenant, b.f.Tenant) }},
	{"unknown", "Entering “Confirmation pending”", func(a, b overviewEntry) int { return a.unknown - b.unknown }},
	{"median", "Median time to resolution (slowest target)", func(a, b overviewEntry) int { return cmpDur(a.median, b.median) }},
	{"worst", "Worst time to resolution", func(a, b overviewEntry) int { return cmpDur(a.worst, b.worst) }},
	{"escalated", "Escalated", func(a, b overviewEntry) int { return a.escalated - b.escalated }},
	{"oldest", "Oldest open escalation", func(a, b overviewEntry) int { return cmpOldest(a.f.OldestEscalation, b.f.OldestEscalation) }},
	{"conflicts", "Payload conflicts", func(a, b overviewEntry) int { return a.f.PayloadConflicts - b.f.PayloadConflicts }},
	{"duplicates", "Duplicates found by audit", func(a, b overviewEntry) int { return a.f.Duplicates - b.f.Duplicates }},
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
	f                  ledger.TenantFigures
	unknown, escalated int
	median, worst      time.Duration
	resolved           int
	perDay             []int
}

// summarize sums a tenant's per-target figures. The worst time is the
// worst of all targets; an exact median across targets would need every
// duration, so the overview shows the highest per-target median, the
// figure a manager acts on (the tenant's page has each target's).
func summarize(f ledger.TenantFigures, days []string) overviewEntry {
	e := overviewEntry{f: f, perDay: make([]int, len(days))}
	for _, t := range f.Targets {
		e.escalated += t.Escalated
		e.resolved += t.Resolved
		if t.Resolved > 0 {
			e.median, e.worst = max(e.median, t.Median), max(e.worst, t.Worst)
		}
		for i, d := range days {
			e.perDay[i] += t.UnknownPerDay[d]
			e.unknown += t.UnknownPerDay[d]
		}
	}
	return e
}

func (fg *figures) figuresOverview(c echo.Context) error {
	ctx := c.Request().Context()
	p := auth.FromContext(ctx)
	now := fg.now()
	vals := c.QueryParams()
	q := parseFiguresQuery(vals, now)
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
	tenants, err := fg.figureTenants(ctx, p)
	if err != nil {
		return err
	}
	days := windowDays(q.Span.Since, q.Days)
	all, err := ledger.FiguresOf(ctx, fg.store, tenants, q.Span)
	if err != nil {
		return err
	}
	entries := make([]overviewEntry, 0, len(all))
	for _, f := range all {
		entries = append(entries, summarize(f, days))
	}
	v := overviewView(entries, q, days, now)
	v.Layout = fg.layout(c, "Figures for all my tenants", "figures")
	v.ServedIn = servedIn(c)
	return fg.render(c, http.StatusOK, views.FiguresOverviewPage(v))
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
		Period: days[0] + " to " + days[len(days)-1] + " (UTC), " + figPlural(q.Days, "day"),
		Empty:  "You have no tenant to show figures for."}
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
			Unknown: figN(e.unknown), Median: resolutionText(e.median, e.resolved), Worst: resolutionText(e.worst, e.resolved),
			Escalated: figN(e.escalated), Oldest: oldestText(e.f.OldestEscalation, now),
			Conflicts: figN(e.f.PayloadConflicts), Duplicates: figN(e.f.Duplicates),
			Spark: sparkline("Operations of "+name+" entering “Confirmation pending” per day", e.perDay)})
	}
	return v
}
