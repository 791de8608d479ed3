package web

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/labstack/echo/v4"

	"settle/auth"
	"settle/ledger"
	"settle/views"
)

// operationPages are the support pages: the operations list, its search,
// and one operation's story with its review and people's actions.
type operationPages struct {
	pages
	store interface {
		Summary(ctx context.Context, tenant, id string) (ledger.Operation, error)
		Get(ctx context.Context, tenant, id string) (ledger.Operation, error)
		Events(ctx context.Context, tenant, id string) ([]ledger.Event, error)
		List(ctx context.Context, f ledger.ListFilter) (ledger.Page, error)
		CountByState(ctx context.Context, f ledger.ListFilter) (ledger.StateCounts, error)
		Search(ctx context.Context, f ledger.SearchFilter) ([]ledger.Operation, error)
		ListFindings(ctx context.Context, f ledger.FindingFilter) ([]ledger.Finding, error)
		Actions(ctx context.Context, f ledger.ActionFilter) ([]ledger.Action, error)
		Resolutions(ctx context.Context, tenant string, open bool) ([]ledger.Resolution, error)
	}
	targets Targets // names each operation's owning team; lists the target filter
}

func (o *operationPages) routes() []ConsoleRoute {
	return []ConsoleRoute{
		{Method: http.MethodGet, Path: "/", Permission: auth.ViewOperations, handle: consoleHome},
		{Method: http.MethodGet, Path: "/operations", Permission: auth.ViewOperations, handle: o.operationsPage},
		{Method: http.MethodGet, Path: "/operations/:tenant/:id", Permission: auth.ViewOperations, Tenanted: true,
			handle: o.operationPage},
		{Method: http.MethodGet, Path: "/settings", Permission: auth.ViewOperations, handle: o.settingsPage},
		{Method: http.MethodPost, Path: "/settings", Permission: auth.ViewOperations, handle: o.settingsZone},
		{Method: http.MethodGet, Path: "/static/:name", Public: true, handle: staticFile},
	}
}

func consoleHome(c echo.Context) error {
	return c.Redirect(http.StatusSeeOther, landingFor(auth.FromContext(c.Request().Context())))
}

// landingFor is where p starts after signing in (sign-in returns to "/"):
// owners at their queue, managers at the figures, everyone else (support,
// admins) at the search.
func landingFor(p *auth.Principal) string {
	switch {
	case p.Has(auth.Resolve):
		return "/escalations"
	case p.Has(auth.ViewFigures):
		return "/figures"
	}
	return "/operations"
}

// opsQuery is the operations page's state, all of it in the URL so that a
// view can be bookmarked and shared.
type opsQuery struct {
	Q, State, Target, Tenant, Age, Cursor string
}

func parseOpsQuery(v url.Values) opsQuery {
	return opsQuery{Q: v.Get("q"), State: v.Get("state"), Target: v.Get("target"),
		Tenant: v.Get("tenant"), Age: v.Get("age"), Cursor: v.Get("cursor")}
}

// href is the page's URL for q, with only the parameters set.
func (q opsQuery) href() string {
	v := url.Values{}
	for _, kv := range [][2]string{{"q", q.Q}, {"state", q.State}, {"target", q.Target},
		{"tenant", q.Tenant}, {"age", q.Age}, {"cursor", q.Cursor}} {
		if kv[1] != "" {
			v.Set(kv[0], kv[1])
		}
	}
	if len(v) == 0 {
		return "/operations"
	}
	return "/operations?" + v.Encode()
}

// ages are the age filter's choices.
var ages = []struct {
	value, label  string
	after, before time.Duration // created within after, or before the cut
}{
	{"1h", "in the last hour", time.Hour, 0},
	{"24h", "in the last 24 hours", 24 * time.Hour, 0},
	{"7d", "in the last 7 days", 7 * 24 * time.Hour, 0},
	{"older1d", "more than a day ago", 0, 24 * time.Hour},
	{"older7d", "more than a week ago", 0, 7 * 24 * time.Hour},
}

// targetNames is what a Targets may also offer: every target's name, for
// the target filter.
type targetNames interface{ Names() []string }

func (o *operationPages) operationsPage(c echo.Context) error {
	p := auth.FromContext(c.Request().Context())
	q := parseOpsQuery(c.QueryParams())
	v, err := o.operationsView(c.Request().Context(), p, q, o.clock(c))
	if err != nil {
		return err
	}
	// A search that finds one operation opens it: what support pasted
	// names the charge the customer asks about.
	if q.Q != "" && len(v.Rows) == 1 && v.Problem == "" {
		return c.Redirect(http.StatusSeeOther, v.Rows[0].Href)
	}
	v.Layout = o.layout(c, "Operations", "operations")
	v.ServedIn = servedIn(c)
	return o.render(c, http.StatusOK, views.Operations(v))
}

// operationsView builds the operations page for p: every query is limited
// to p's tenants.
func (o *operationPages) operationsView(ctx context.Context, p *auth.Principal, q opsQuery, now time.Time) (views.OperationsPage, error) {
	v := views.OperationsPage{Query: q.Q, Heading: "Operations"}
	all, tenants := tenantScope(p)
	v.States = stateOptions(q.State)
	v.Targets = targetOptions(o.targets, q.Target)
	v.Tenants = tenantOptions(all, tenants, q.Tenant)
	v.Ages = ageOptions(q.Age)

	f := ledger.ListFilter{Tenants: tenants, AllTenants: all, Target: q.Target, Cursor: q.Cursor}
	if q.Tenant != "" {
		if !all && !slices.Contains(tenants, q.Tenant) {
			v.Problem = "You cannot see the operations of tenant “" + ledger.PlainText(q.Tenant, 63) + "”."
			v.Empty = "No operations to show."
			return v, nil
		}
		f.Tenant, f.Tenants, f.AllTenants = q.Tenant, nil, false
	}
	if q.State != "" {
		if !ledger.State(q.State).Valid() {
			v.Problem = "Unknown state; showing every state."
		} else {
			f.State = ledger.State(q.State)
		}
	}
	for _, a := range ages {
		if a.value != q.Age {
			continue
		}
		if a.after > 0 {
			t := now.Add(-a.after)
			f.CreatedAfter = &t
		} else {
			t := now.Add(-a.before)
			f.CreatedBefore = &t
		}
	}
	if q.Q != "" {
		return o.searchView(ctx, v, f, q, now)
	}
	counts, err := o.store.CountByState(ctx, f)
	if err != nil {
		return v, err
	}
	v.Tabs = stateTabs(q, counts)
	page, err := o.store.List(ctx, f)
	if ledger.ErrorCode(err) == ledger.EInvalid {
		v.Problem = ledger.ErrorMessage(err)
		v.Empty = "No operations to show."
		return v, nil
	}
	if err != nil {
		return v, err
	}
	v.Rows = o.rows(page.Operations, now)
	v.Empty = "No operations match these filters."
	if page.Next != "" {
		next := q
		next.Cursor = page.Next
		v.Next = next.href()
	}
	if q.Cursor != "" {
		first := q
		first.Cursor = ""
		v.First = first.href()
	}
	return v, nil
}

// searchView answers the search box: the operations of p's tenants
// carrying the reference, narrowed by the other filters.
func (o *operationPages) searchView(ctx context.Context, v views.OperationsPage, f ledger.ListFilter, q opsQuery,
	now time.Time) (views.OperationsPage, error) {
	v.Heading = "Operations carrying “" + ledger.PlainText(q.Q, 200) + "”"
	if err := ledger.CheckFilterText("reference", q.Q); err != nil {
		v.Problem = ledger.ErrorMessage(err)
		v.Empty = "No operations to show."
		return v, nil
	}
	sf := ledger.SearchFilter{Tenants: f.Tenants, AllTenants: f.AllTenants, Ref: q.Q}
	if f.Tenant != "" {
		sf.Tenants, sf.AllTenants = []string{f.Tenant}, false
	}
	ops, err := o.store.Search(ctx, sf)
	if err != nil {
		return v, err
	}
	kept := ops[:0]
	for _, op := range ops {
		switch {
		case f.State != "" && op.State != f.State,
			f.Target != "" && op.Target != f.Target,
			f.CreatedAfter != nil && op.CreatedAt.Before(*f.CreatedAfter),
			f.CreatedBefore != nil && !op.CreatedAt.Before(*f.CreatedBefore):
			continue
		}
		kept = append(kept, op)
	}
	v.Rows = o.rows(kept, now)
	v.Empty = "No operation you can see carries this id or reference."
	return v, nil
}

func (o *operationPages) rows(ops []ledger.Operation, now time.Time) []views.OperationRow {
	rows := make([]views.OperationRow, 0, len(ops))
	for _, op := range ops {
		rows = append(rows, views.OperationRow{
			ID: op.ID, Href: operationHref(op.Tenant, op.ID), Tenant: op.Tenant,
			IntentRef: ledger.PlainText(op.IntentRef, 300), Type: op.Type, Target: op.Target,
			State: string(op.State), Status: op.State.Plain(ownerOf(o.targets, op.Target)),
			Created: timeView(&op.CreatedAt, now, ""), Updated: timeView(&op.UpdatedAt, now, ""),
		})
	}
	return rows
}

func operationHref(tenant, id string) string {
	return "/operations/" + url.PathEscape(tenant) + "/" + url.PathEscape(id)
}

// owner is the team owning target, for "Under review by …".
func ownerOf(ts Targets, target string) string {
	if ts == nil {
		return ""
	}
	t, _ := ts.Target(target)
	return t.Owner
}

// stateTabs are the state counts as tabs; each keeps the other filters.
func stateTabs(q opsQuery, counts ledger.StateCounts) []views.Tab {
	total, capped := 0, false
	for _, st := range ledger.States {
		total += counts.Counts[st]
		capped = capped || counts.Capped[st]
	}
	all := q
	all.State, all.Cursor = "", ""
	tabs := []views.Tab{{ID: "all", Label: "All", Count: countText(total, capped), Href: all.href(), Current: q.State == ""}}
	for _, st := range ledger.States {
		t := q
		t.State, t.Cursor = string(st), ""
		tabs = append(tabs, views.Tab{ID: string(st), Label: stateLabel(st), Count: countText(counts.Counts[st], counts.Capped[st]),
			Href: t.href(), Current: q.State == string(st)})
	}
	return tabs
}

// stateLabel is a state's plain name without a team: "Under review".
func stateLabel(st ledger.State) string {
	if st == ledger.Escalated {
		return "Under review"
	}
	return st.Plain("")
}

func stateOptions(cur string) []views.Option {
	opts := []views.Option{{Value: "", Label: "Any state", Selected: cur == ""}}
	for _, st := range ledger.States {
		opts = append(opts, views.Option{Value: string(st), Label: stateLabel(st), Selected: cur == string(st)})
	}
	return opts
}

// targetOptions is the target filter's choices: every target ts names,
// and cur.
func targetOptions(ts Targets, cur string) []views.Option {
	opts := []views.Option{{Value: "", Label: "Any target", Selected: cur == ""}}
	var names []string
	if n, ok := ts.(targetNames); ok {
		names = slices.Sorted(slices.Values(n.Names()))
	}
	if cur != "" && !slices.Contains(names, cur) {
		names = append(names, cur)
	}
	for _, n := range names {
		opts = append(opts, views.Option{Value: n, Label: ledger.PlainText(n, 128), Selected: cur == n})
	}
	return opts
}

func tenantOptions(all bool, tenants []string, cur string) []views.Option {
	label := "All my tenants"
	if all {
		label = "All tenants"
	}
	opts := []views.Option{{Value: "", Label: label, Selected: cur == ""}}
	names := slices.Clone(tenants)
	if all && cur != "" && !slices.Contains(names, cur) {
		names = append(names, cur)
	}
	for _, t := range names {
		opts = append(opts, views.Option{Value: t, Label: ledger.PlainText(t, 63), Selected: cur == t})
	}
	return opts
}

func ageOptions(cur string) []views.Option {
	opts := []views.Option{{Value: "", Label: "at any time", Selected: cur == ""}}
	for _, a := range ages {
		opts = append(opts, views.Option{Value: a.value, Label: a.label, Selected: cur == a.value})
	}
	return opts
}
