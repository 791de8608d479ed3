package web

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"settle/auth"
	"settle/ledger"
	"settle/views"
)

// figureRoutes are the console's pages for the per-tenant figures, charts
// and CSV export (managers). The tenant is named in the query: a manager
// asking for a tenant they may not read gets the same 404 as for an
// unknown one.
// figures serves the figures pages: a tenant's counts, its CSV export,
// and the overview of every tenant a manager may read.
type figures struct {
	pages
	store interface {
		ledger.FigureSource
		ledger.TenantLister
	}
}

func (fg *figures) routes() []ConsoleRoute {
	return []ConsoleRoute{
		{Method: http.MethodGet, Path: "/figures", Permission: auth.ViewFigures, Tenanted: true, handle: fg.figuresPage},
		{Method: http.MethodGet, Path: "/figures.csv", Permission: auth.ViewFigures, Tenanted: true, handle: fg.figuresCSV},
		{Method: http.MethodGet, Path: "/figures/overview", Permission: auth.ViewFigures, handle: fg.figuresOverview},
		{Method: http.MethodGet, Path: "/figures/overview.csv", Permission: auth.ViewFigures, handle: fg.figuresOverviewCSV},
	}
}

// figureWindows are the page's windows, in whole UTC days ending today.
var figureWindows = []struct {
	value string
	days  int
}{{"7d", 7}, {"30d", 30}, {"90d", 90}}

// figuresQuery is a figures page's state, all of it in the URL.
type figuresQuery struct {
	Tenant, Window string
	From, To       string // the date form's days, both included; "" for a 7/30/90-day window
	Days           int
	Span           ledger.Window // whole UTC days; Until is the midnight after To
	Problem        string
	sort, dir      string // the overview's order
}

// parseFiguresQuery reads the window: ?window=7d|30d|90d (30d when
// absent), or ?from=YYYY-MM-DD&to=YYYY-MM-DD, both days included (to
// defaults to today, from to 30 days before to). Windows are whole UTC
// days, so that the daily rollups answer them exactly; a window that
// ledger.Window rejects, or that ends after today, falls back to 30 days
// with a note.
func parseFiguresQuery(v url.Values, now time.Time) figuresQuery {
	q := figuresQuery{Tenant: v.Get("tenant"), Window: v.Get("window"), From: v.Get("from"), To: v.Get("to")}
	if q.From != "" || q.To != "" {
		if w, err := ledger.DatesEnding(q.From, q.To, now); err == nil {
			q.Window, q.Days, q.Span = "", w.Days(), w
			q.From, q.To = w.Since.Format(time.DateOnly), w.Until.AddDate(0, 0, -1).Format(time.DateOnly)
			return q
		}
		q.Problem = "The dates must be days (YYYY-MM-DD), from before to, at most " +
			strconv.Itoa(ledger.MaxWindowDays) + " days and not after today; showing 30 days."
		q.From, q.To = "", ""
	}
	for _, w := range figureWindows {
		if w.value == q.Window {
			q.Days = w.days
		}
	}
	if q.Days == 0 {
		if q.Window != "" && q.Problem == "" {
			q.Problem = "Unknown window; showing 30 days."
		}
		q.Window, q.Days = "30d", 30
	}
	q.Span = ledger.DaysEnding(now, q.Days)
	return q
}

// params are q's URL parameters, with tenant replaced.
func (q figuresQuery) params(tenant string) url.Values {
	v := url.Values{}
	if tenant != "" {
		v.Set("tenant", tenant)
	}
	if q.From != "" {
		v.Set("from", q.From)
		v.Set("to", q.To)
	} else {
		v.Set("window", q.Window)
	}
	if q.sort != "" {
		v.Set("sort", q.sort)
		v.Set("dir", q.dir)
	}
	return v
}

// figuresTenant is the tenant a figures request is about: the one named,
// or the principal's only tenant. ok=false: there is no single tenant, and
// the overview is the page to show.
func figuresTenant(p *auth.Principal, named string) (tenant string, ok bool, err error) {
	if named != "" {
		if !p.Can(auth.ViewFigures, named, "") {
			return "", false, notFound()
		}
		return named, true, nil
	}
	if all, ts := p.Tenants(auth.ViewFigures); !all && len(ts) == 1 {
		return ts[0], true, nil
	}
	return "", false, nil
}

func (fg *figures) figuresPage(c echo.Context) error {
	ctx := c.Request().Context()
	p := auth.FromContext(ctx)
	now := fg.now()
	q := parseFiguresQuery(c.QueryParams(), now)
	tenant, ok, err := figuresTenant(p, q.Tenant)
	if err != nil {
		return err
	}
	if !ok {
		return c.Redirect(http.StatusSeeOther, "/figures/overview?"+q.params("").Encode())
	}
	f, err := fg.tenantFigures(ctx, tenant, q.Span)
	if err != nil {
		return err
	}
	v := figuresView(f, q, now)
	if all, ts := p.Tenants(auth.ViewFigures); all || len(ts) > 1 {
		v.Overview = "/figures/overview?" + q.params("").Encode()
	}
	v.Layout = fg.layout(c, "Figures for "+ledger.PlainText(tenant, 63), "figures")
	v.ServedIn = servedIn(c)
	return fg.render(c, http.StatusOK, views.Figures(v))
}

// figuresCSV is the page's numbers as `settle figures --csv` writes them,
// by the same function.
func (fg *figures) figuresCSV(c echo.Context) error {
	ctx := c.Request().Context()
	q := parseFiguresQuery(c.QueryParams(), fg.now())
	tenant, ok, err := figuresTenant(auth.FromContext(ctx), q.Tenant)
	if err != nil {
		return err
	}
	if !ok {
		return notFound()
	}
	f, err := fg.tenantFigures(ctx, tenant, q.Span)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := ledger.WriteFiguresCSV(&buf, f); err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set(echo.HeaderCacheControl, "no-store")
	h.Set(echo.HeaderContentDisposition, `attachment; filename="`+csvName(tenant, q.Span)+`"`)
	return c.Blob(http.StatusOK, "text/csv; charset=utf-8", buf.Bytes())
}

// csvName is the download's file name: the tenant's name only when it is
// safe in a header, so that no tenant name can reshape the header.
func csvName(tenant string, w ledger.Window) string {
	name := "tenant"
	if tenant != "" && len(tenant) <= 63 && !slices.ContainsFunc([]byte(tenant), func(b byte) bool {
		return !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-' || b == '_' || b == '.')
	}) {
		name = tenant
	}
	return "settle-figures-" + name + "-" + w.Since.Format(time.DateOnly) + "-to-" +
		w.Until.AddDate(0, 0, -1).Format(time.DateOnly) + ".csv"
}

func (fg *figures) tenantFigures(ctx context.Context, tenant string, w ledger.Window) (ledger.TenantFigures, error) {
	return ledger.Figures(ctx, fg.store, tenant, w)
}
