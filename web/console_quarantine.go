package web

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"settle/auth"
	"settle/ledger"
	"settle/resolve"
	"settle/views"
)

// The quarantine's list: one compact row per item, linking the item's
// page, where its actions are (console_quarantine_item.go), with the
// bulk dismissal's selection (console_quarantine_bulk.go).

// reviewerScope is a principal as the quarantine's review sees it.
type reviewerScope struct{ p *auth.Principal }

// ReviewTenants implements resolve.ReviewScope.
func (r reviewerScope) ReviewTenants() (bool, []string) { return r.p.Tenants(auth.ReviewInbox) }

// CanReview implements resolve.ReviewScope.
func (r reviewerScope) CanReview(tenant, target string) bool {
	return r.p.Can(auth.ReviewInbox, tenant, target)
}

// RoleFor implements resolve.ReviewScope.
func (r reviewerScope) RoleFor(tenant, target string) string {
	return string(r.p.RoleFor(auth.ReviewInbox, tenant, target))
}

// quarantineScope is the part of a quarantine filter p's bindings allow:
// the tenants p may review, and unattributed items only for a binding that
// covers every tenant.
func quarantineScope(p *auth.Principal, open bool) ledger.QuarantineFilter {
	all, tenants := p.Tenants(auth.ReviewInbox)
	return ledger.QuarantineFilter{Open: open, AllTenants: all, Tenants: tenants, Unattributed: all}
}

// quarantinePage shows the items the URL's filter selects.
func (rv *review) quarantinePage(c echo.Context) error {
	ctx := c.Request().Context()
	p := auth.FromContext(ctx)
	now := rv.clock(c)
	q := quarQueryOf("/quarantine", c.QueryParams())
	all, tenants := p.Tenants(auth.ReviewInbox)
	v := views.QuarantinePage{
		Layout:  rv.layout(c, "Quarantine", "quarantine"),
		Filters: q.tabs("Resolved"), Status: q.Status, Ref: q.Ref, ReasonFilter: q.Reason,
		Targets: targetOptions(rv.targets, q.Target), Tenants: tenantOptions(all, tenants, q.Tenant),
		Ages: options(q.Age, queueAges), Done: quarantineDone(c.QueryParams()), BulkMax: countText(resolve.MaxBulkDismiss, false),
	}
	f, problem := q.filter(p, now)
	if problem != "" {
		v.FilterProblem = problem
		v.ServedIn = servedIn(c)
		return rv.render(c, http.StatusOK, views.Quarantine(v))
	}
	items, last, err := rv.quarantine.List(ctx, reviewerScope{p}, f)
	if err != nil {
		return err
	}
	if q.Cursor != "" {
		v.First = q.href("")
	}
	if last != 0 {
		v.Next = q.href(strconv.FormatInt(last, 10))
	}
	for _, it := range items {
		r := rv.quarantineRow(p, it, now)
		if r.Select != "" {
			v.Bulk = true
		}
		v.Rows = append(v.Rows, r)
	}
	if v.Bulk {
		v.BulkAll = bulkAllLabel(len(v.Rows), v.First != "" || v.Next != "")
		for k, xs := range q.values() {
			v.Filter = append(v.Filter, views.Hidden{Name: k, Value: xs[0]})
		}
	}
	if len(v.Rows) == 0 {
		v.Empty = map[string]string{"open": "No quarantined event waits for review.",
			"resolved": "No quarantined event has been resolved yet.", "all": "No event has been quarantined."}[q.Status]
		if q.filtered() {
			v.Empty = "No quarantined event matches these filters."
		}
	}
	v.ServedIn = servedIn(c)
	return rv.render(c, http.StatusOK, views.Quarantine(v))
}

// quarantineDone says what the action that led back to the list did.
func quarantineDone(qv url.Values) string {
	switch qv.Get("done") {
	case "linked":
		return "Linked. The event is now evidence on the operation; the reconciler checks it with the target."
	case "dismissed":
		return "Dismissed. The reason is in the event log."
	case "bulk":
		n := func(k string) int { x, _ := strconv.Atoi(qv.Get(k)); return max(x, 0) }
		return bulkDismissText(n("dismissed"), n("resolved"), n("refused"))
	}
	return ""
}

// quarantineHref is the item's page.
func quarantineHref(q ledger.QuarantineItem) string {
	segment := q.ScopeTenant()
	if segment == "" {
		segment = unattributedSegment
	}
	return "/quarantine/" + url.PathEscape(segment) + "/" + strconv.FormatInt(q.ID, 10)
}

// quarantineRow is q as one line of the list.
func (rv *review) quarantineRow(p *auth.Principal, q ledger.QuarantineItem, now time.Time) views.QuarantineRow {
	r := views.QuarantineRow{
		ID: strconv.FormatInt(q.ID, 10), Href: quarantineHref(q), At: timeView(&q.At, now, ""),
		Target: q.Target, Tenant: reviewersOf(q), Reason: ledger.PlainText(q.Reason, 300),
		EventID: shownOr(q.EventID, "—"), RemoteID: shownOr(q.RemoteID, "—"), Status: "Open",
		Resolved: resolutionView(p, q, now),
	}
	if r.Resolved != nil {
		r.Status = r.Resolved.Verb
	} else if !rv.readOnly {
		r.Select = q.ScopeTenant() + "/" + r.ID
	}
	return r
}

// reviewersOf names whose people review q.
func reviewersOf(q ledger.QuarantineItem) string {
	if t := q.ScopeTenant(); t != "" {
		return shownText(t)
	}
	return "unattributed (every tenant's reviewers)"
}

// resolutionView says what was done with q; nil while it is open.
func resolutionView(p *auth.Principal, q ledger.QuarantineItem, now time.Time) *views.QuarantineResolution {
	if q.ResolvedAt == nil {
		return nil
	}
	r := &views.QuarantineResolution{Kind: q.ResolvedAs, Verb: "Dismissed", By: personName(q.ResolvedByName, q.ResolvedByRole),
		At: timeView(q.ResolvedAt, now, ""), Reason: ledger.PlainText(q.Resolution, 500)}
	if q.ResolvedAs == ledger.QuarantineLinked {
		r.Verb, r.Operation = "Linked", q.OperationID
		if p.Can(auth.ViewOperations, q.OpTenant, "") {
			r.OperationHref = operationHref(q.OpTenant, q.OperationID)
		}
	} else {
		r.Kind = ledger.QuarantineDismissed
	}
	return r
}

// alreadyText is the sentence of an item someone resolved before the
// reader acted: "Already dismissed by Grace Owner (owner) at …".
func alreadyText(r *views.QuarantineResolution) string {
	s := "Already dismissed"
	if r.Kind == ledger.QuarantineLinked {
		s = "Already linked to operation " + r.Operation
	}
	return s + " by " + r.By + " at " + r.At.Absolute + "."
}

// bulkAllLabel is the "all matching" button for a list of n rows: the
// count when this page is the whole list, else only that there are more.
func bulkAllLabel(n int, paged bool) string {
	if paged {
		return "Dismiss all matching this filter (more than " + strconv.Itoa(reviewPageSize) + ")…"
	}
	if n == 1 {
		return "Dismiss the one matching this filter…"
	}
	return "Dismiss all " + strconv.Itoa(n) + " matching this filter…"
}
