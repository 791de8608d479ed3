package web

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"settle/auth"
	"settle/ledger"
	"settle/views"
)

// review serves the console's pages for quarantine and audit findings
// review (owners).
type review struct {
	pages
	store interface {
		ledger.ReviewStore
		Find(ctx context.Context, tenant, ref string) ([]ledger.Operation, error)
	}
	targets Targets // names each finding's owning team
}

func (rv *review) routes() []ConsoleRoute {
	return []ConsoleRoute{
		{Method: http.MethodGet, Path: "/quarantine", Permission: auth.ReviewInbox, handle: rv.quarantinePage},
		{Method: http.MethodPost, Path: "/quarantine/:tenant/:id/link", Permission: auth.ReviewInbox, Tenanted: true,
			handle: rv.quarantineLink},
		{Method: http.MethodPost, Path: "/quarantine/:tenant/:id/dismiss", Permission: auth.ReviewInbox, Tenanted: true,
			handle: rv.quarantineDismiss},
		{Method: http.MethodGet, Path: "/findings", Permission: auth.ReviewInbox, handle: rv.findingsPage},
		{Method: http.MethodGet, Path: "/findings/:tenant/:id", Permission: auth.ViewOperations, Tenanted: true,
			handle: rv.findingPage},
		{Method: http.MethodPost, Path: "/findings/:tenant/:id/acknowledge", Permission: auth.ReviewInbox, Tenanted: true,
			handle: rv.findingAcknowledge},
	}
}

// unattributedSegment stands in the URL for the tenant of an item that has
// none; it is not a valid tenant name, so it never names a real one.
const unattributedSegment = "-"

// reviewItem reads the tenant and the item number of a review action's
// URL. A principal who may not review that tenant's items gets the same
// 404 as for an unknown item.
func reviewItem(c echo.Context, p *auth.Principal) (tenant string, id int64, err error) {
	tenant = c.Param("tenant")
	if tenant == unattributedSegment {
		tenant = ""
	} else if !ledger.ValidTenant(tenant) {
		return "", 0, notFound()
	}
	id, perr := strconv.ParseInt(c.Param("id"), 10, 64)
	if perr != nil || id <= 0 || !p.Can(auth.ReviewInbox, tenant, "") {
		return "", 0, notFound()
	}
	return tenant, id, nil
}

// quarantineScope is the part of a quarantine filter p's bindings allow:
// the tenants p may review, and unattributed items only for a binding that
// covers every tenant.
func quarantineScope(p *auth.Principal, open bool) ledger.QuarantineFilter {
	all, tenants := p.Tenants(auth.ReviewInbox)
	return ledger.QuarantineFilter{Open: open, AllTenants: all, Tenants: tenants, Unattributed: all}
}

// visibleQuarantine keeps the items p may review: owners are bound to
// targets as well as tenants.
func visibleQuarantine(p *auth.Principal, items []ledger.QuarantineItem) []ledger.QuarantineItem {
	out := items[:0:0]
	for _, q := range items {
		if p.Can(auth.ReviewInbox, q.ScopeTenant(), q.Target) {
			out = append(out, q)
		}
	}
	return out
}

// quarantineForm is what a person typed into a quarantine item's form,
// kept when the action could not be done.
type quarantineForm struct {
	item, operation, reason, problem string
}

func (rv *review) quarantinePage(c echo.Context) error {
	return rv.renderQuarantine(c, http.StatusOK, quarantineForm{})
}

// renderQuarantine shows the quarantine page with the status filter of the
// URL, and the problem of a refused action when there is one.
func (rv *review) renderQuarantine(c echo.Context, status int, form quarantineForm) error {
	rs := rv.store
	ctx := c.Request().Context()
	p := auth.FromContext(ctx)
	now := rv.clock(c)
	q := quarQueryOf("/quarantine", c.QueryParams())
	all, tenants := p.Tenants(auth.ReviewInbox)
	v := views.QuarantinePage{
		Layout:  rv.layout(c, "Quarantine", "quarantine"),
		Filters: q.tabs("Resolved"), Status: q.Status, Ref: q.Ref, ReasonFilter: q.Reason,
		Targets: targetOptions(rv.targets, q.Target), Tenants: tenantOptions(all, tenants, q.Tenant),
		Ages: options(q.Age, queueAges),
		Done: quarantineDone(c.QueryParam("done")), Problem: form.problem, ProblemItem: form.item,
		Operation: form.operation, Reason: form.reason,
	}
	f, problem := q.filter(p, now)
	if problem != "" {
		v.FilterProblem = problem
		v.ServedIn = servedIn(c)
		return rv.render(c, status, views.Quarantine(v))
	}
	items, err := rs.ListQuarantine(ctx, f)
	if err != nil {
		return err
	}
	if q.Cursor != "" {
		v.First = q.href("")
	}
	if len(items) > reviewPageSize {
		items = items[:reviewPageSize]
		v.Next = q.href(strconv.FormatInt(items[len(items)-1].ID, 10))
	}
	for _, it := range visibleQuarantine(p, items) {
		v.Rows = append(v.Rows, rv.quarantineRow(p, it, now))
	}
	if len(v.Rows) == 0 {
		v.Empty = map[string]string{"open": "No quarantined event waits for review.",
			"resolved": "No quarantined event has been resolved yet.", "all": "No event has been quarantined."}[q.Status]
		if q.filtered() {
			v.Empty = "No quarantined event matches these filters."
		}
	}
	v.ServedIn = servedIn(c)
	return rv.render(c, status, views.Quarantine(v))
}

func quarantineDone(done string) string {
	switch done {
	case "linked":
		return "Linked. The event is now evidence on the operation; the reconciler checks it with the target."
	case "dismissed":
		return "Dismissed. The reason is in the event log."
	}
	return ""
}

func (rv *review) quarantineRow(p *auth.Principal, q ledger.QuarantineItem, now time.Time) views.QuarantineRow {
	id := strconv.FormatInt(q.ID, 10)
	r := views.QuarantineRow{
		ID: id, Target: q.Target, Reason: ledger.PlainText(q.Reason, 300),
		EventID: shownOr(q.EventID, "—"), Reference: shownOr(q.Reference, "—"),
		Claimed: shownOr(q.Tenant, "none"), Tenant: shownText(q.ScopeTenant()), RemoteID: shownOr(q.RemoteID, "—"),
		At: timeView(&q.At, now, ""), Operation: q.OperationID, Open: q.ResolvedAt == nil,
	}
	segment := r.Tenant
	if r.Tenant == "" {
		r.Tenant, segment = "unattributed (every tenant's reviewers)", unattributedSegment
	}
	if q.OperationID != "" && p.Can(auth.ViewOperations, q.OpTenant, "") {
		r.OperationHref = "/operations/" + url.PathEscape(q.OpTenant) + "/" + url.PathEscape(q.OperationID)
	}
	switch {
	case r.Open:
		r.Status = "Open: waiting for review"
		if !rv.readOnly {
			base := "/quarantine/" + url.PathEscape(segment) + "/" + id
			r.DismissAction = base + "/dismiss"
			if q.ScopeTenant() != "" {
				r.LinkAction = base + "/link"
			}
		}
	default:
		r.Status = "Resolved by " + orName(q.ResolvedByName, q.ResolvedBy) + ", " + timeText(*q.ResolvedAt, now)
		r.Resolution = ledger.PlainText(q.Resolution, 500)
	}
	return r
}

func orName(name, subject string) string {
	if name != "" {
		return name
	}
	return subject
}

// openQuarantineItem returns the tenant's open item id when p may review
// it (owners: its target too), or answers 404.
func (rv *review) openQuarantineItem(ctx context.Context, rs ledger.ReviewStore, p *auth.Principal, tenant string, id int64) (ledger.QuarantineItem, error) {
	q, err := rs.QuarantineItem(ctx, tenant, id)
	switch {
	case ledger.ErrorCode(err) == ledger.ENotFound:
		return q, notFound()
	case err != nil:
		return q, err
	case q.ResolvedAt != nil || !p.Can(auth.ReviewInbox, q.ScopeTenant(), q.Target):
		return q, notFound()
	}
	return q, nil
}

// quarantineLink attributes an open item to an operation of the same
// tenant, named by its id or any of its references.
func (rv *review) quarantineLink(c echo.Context) error {
	rs := rv.store
	ctx := c.Request().Context()
	p := auth.FromContext(ctx)
	tenant, id, err := reviewItem(c, p)
	if err != nil {
		return err
	}
	q, err := rv.openQuarantineItem(ctx, rs, p, tenant, id)
	if err != nil {
		return err
	}
	form := quarantineForm{item: strconv.FormatInt(id, 10),
		operation: strings.TrimSpace(c.FormValue("operation")), reason: strings.TrimSpace(c.FormValue("reason"))}
	problem := func(msg string) error {
		form.problem = msg
		return rv.renderQuarantine(c, http.StatusUnprocessableEntity, form)
	}
	if tenant == "" {
		return problem("An event of no tenant cannot be linked to an operation. Dismiss it with a reason instead.")
	}
	if err := ledger.CheckReviewNote("reason", form.reason); err != nil {
		return problem("Give the reason the event belongs to the operation: " + ledger.ErrorMessage(err) + ".")
	}
	if form.operation == "" || len(form.operation) > 300 {
		return problem("Name the operation: its id or one of its references.")
	}
	ops, err := rv.store.Find(ctx, tenant, form.operation)
	switch {
	case ledger.ErrorCode(err) == ledger.EInvalid, err == nil && len(ops) == 0:
		return problem("No operation of tenant " + tenant + " has that id or reference.")
	case err != nil:
		return err
	case len(ops) > 1:
		return problem("Several operations of tenant " + tenant + " carry that reference. Use the operation id.")
	}
	err = rs.LinkQuarantine(actingAs(c, p, auth.ReviewInbox, tenant, q.Target), tenant, id, ops[0].ID, form.reason)
	switch ledger.ErrorCode(err) {
	case "":
	case ledger.ENotFound:
		return notFound()
	case ledger.EInvalid:
		return problem(ledger.ErrorMessage(err))
	default:
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/quarantine?done=linked")
}

// quarantineDismiss closes an open item with the reviewer's reason.
func (rv *review) quarantineDismiss(c echo.Context) error {
	rs := rv.store
	ctx := c.Request().Context()
	p := auth.FromContext(ctx)
	tenant, id, err := reviewItem(c, p)
	if err != nil {
		return err
	}
	q, err := rv.openQuarantineItem(ctx, rs, p, tenant, id)
	if err != nil {
		return err
	}
	reason := strings.TrimSpace(c.FormValue("reason"))
	if err := ledger.CheckReviewNote("reason", reason); err != nil {
		return rv.renderQuarantine(c, http.StatusUnprocessableEntity, quarantineForm{item: strconv.FormatInt(id, 10),
			problem: "Give the reason the event needs no action: " + ledger.ErrorMessage(err) + "."})
	}
	err = rs.ResolveQuarantine(actingAs(c, p, auth.ReviewInbox, tenant, q.Target), tenant, id, reason)
	if ledger.ErrorCode(err) == ledger.ENotFound {
		return notFound()
	}
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/quarantine?done=dismissed")
}
