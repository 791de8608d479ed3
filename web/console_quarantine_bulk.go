package web

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"settle/auth"
	"settle/ledger"
	"settle/resolve"
	"settle/views"
)

// Bulk dismissal of quarantined events: the list's selection, or every
// open event matching its filter (resolved on the server from the filter
// in the URL, not from the page), goes to a confirmation page (a GET that
// works without JavaScript) listing what it covers and asking one reason;
// its POST dismisses each item through the review service, which checks
// the permission item by item and skips those already resolved.

// bulkListed is how many items a confirmation page lists; the others it
// covers are carried unlisted.
const bulkListed = 50

// bulkDismissReview is the confirmation page.
func (rv *review) bulkDismissReview(c echo.Context) error {
	p := auth.FromContext(c.Request().Context())
	qv := c.QueryParams()
	filter := url.Values{}
	for k, xs := range qv {
		if k != "scope" && k != "item" {
			filter[k] = xs
		}
	}
	var (
		items   []ledger.QuarantineItem
		missing []resolve.ItemRef
		err     error
	)
	q := quarQueryOf("/quarantine", filter)
	summary := ""
	if qv.Get("scope") == "all" {
		q.Status, q.Cursor = "open", ""
		f, problem := q.filter(p, rv.clock(c))
		if problem != "" {
			err = formError(problem)
		} else if items, err = rv.quarantine.Matching(c.Request().Context(), reviewerScope{p}, f); err == nil {
			summary = figPlural(len(items), "open event") + map[bool]string{true: " matches ", false: " match "}[len(items) == 1] +
				filterText(q) + "."
			if len(items) > bulkListed {
				summary += " The first " + strconv.Itoa(bulkListed) + " are listed; all of them are dismissed."
			}
		}
	} else {
		items, missing, err = rv.quarantine.Items(c.Request().Context(), reviewerScope{p}, itemRefs(qv["item"]))
	}
	return rv.renderBulkDismiss(c, q.href(""), summary, items, missing, views.Field{}, err)
}

// bulkDismiss dismisses each confirmed item with the one reason.
func (rv *review) bulkDismiss(c echo.Context) error {
	p := auth.FromContext(c.Request().Context())
	form, err := c.FormParams()
	if err != nil {
		return formError("The form could not be read.")
	}
	refs := itemRefs(form["item"])
	d, err := rv.quarantine.DismissEach(actingAs(c, p, auth.ReviewInbox, "", ""), reviewerScope{p}, refs, form.Get("why"))
	if resolve.FieldOf(err) == resolve.FieldReason {
		items, missing, ierr := rv.quarantine.Items(c.Request().Context(), reviewerScope{p}, refs)
		if ierr != nil {
			return actionError(ierr)
		}
		back := form.Get("back")
		return rv.renderBulkDismiss(c, back, "", items, missing,
			views.Field{Value: kept(form.Get("why"), 500), Error: ledger.ErrorMessage(err)}, nil)
	}
	if err != nil {
		return actionError(err)
	}
	return c.Redirect(http.StatusSeeOther, "/quarantine?done=bulk&dismissed="+strconv.Itoa(d.Dismissed)+
		"&resolved="+strconv.Itoa(d.AlreadyResolved)+"&refused="+strconv.Itoa(d.Refused))
}

// renderBulkDismiss shows the confirmation page of items (the open ones
// listed, the first bulkListed of them shown), those left out with why,
// and the reason field as typed; err is the selection's refusal.
func (rv *review) renderBulkDismiss(c echo.Context, back, summary string, items []ledger.QuarantineItem,
	missing []resolve.ItemRef, why views.Field, err error) error {
	if back == "" || !strings.HasPrefix(back, "/quarantine") {
		back = "/quarantine"
	}
	v := views.BulkConfirmPage{Action: "/quarantine/dismiss", Back: back, Button: "Dismiss these events",
		ItemHeading: "Event", Summary: summary, Ask: &why, AskLabel: "Why they need no action (one reason for all of them)"}
	switch code := ledger.ErrorCode(err); code {
	case "":
	case ledger.EInvalid:
		v.Problem = ledger.ErrorMessage(err)
	default:
		return actionError(err)
	}
	for _, it := range items {
		bi := quarantineBulkItem(it)
		switch {
		case it.ResolvedAt != nil:
			bi.Result = "Already resolved: nothing to do."
			v.Skipped = append(v.Skipped, bi)
		case len(v.Items) < bulkListed:
			v.Items = append(v.Items, bi)
		default:
			v.More = append(v.More, bi.Value)
		}
	}
	for _, m := range missing {
		v.Skipped = append(v.Skipped, views.BulkItem{Intent: "Item " + strconv.FormatInt(m.ID, 10),
			Tenant: ledger.PlainText(m.Tenant, 63), Result: "Not found among the events you review."})
	}
	n := len(v.Items) + len(v.More)
	v.Heading = "Dismiss " + figPlural(n, "quarantined event")
	if v.Problem == "" && n == 0 {
		v.Problem = "None of these events is open and yours to review."
	}
	v.Layout = rv.layout(c, "Review a bulk dismissal", "quarantine")
	// The page of a GET is a page (200) even when nothing can be done; a
	// refused confirmation is a 422.
	status := http.StatusOK
	if why.Error != "" {
		status = http.StatusUnprocessableEntity
	}
	return rv.render(c, status, views.BulkConfirm(v))
}

// quarantineBulkItem shows q as an item of a bulk dismissal.
func quarantineBulkItem(q ledger.QuarantineItem) views.BulkItem {
	return views.BulkItem{Value: q.ScopeTenant() + "/" + strconv.FormatInt(q.ID, 10), Href: quarantineHref(q),
		Intent: shownOr(q.EventID, "item "+strconv.FormatInt(q.ID, 10)).Text, Tenant: reviewersOf(q), Target: q.Target}
}

// itemRefs reads "tenant/item number" form values ("" tenant for an
// unattributed item); a value of another shape names nothing.
func itemRefs(values []string) []resolve.ItemRef {
	refs := make([]resolve.ItemRef, 0, len(values))
	for _, v := range values {
		tenant, id, _ := strings.Cut(v, "/")
		n, _ := strconv.ParseInt(id, 10, 64)
		refs = append(refs, resolve.ItemRef{Tenant: tenant, ID: n})
	}
	return refs
}

// filterText says in words which filter a bulk dismissal took.
func filterText(q quarQuery) string {
	var parts []string
	for _, f := range []struct{ label, value string }{{"target", q.Target}, {"tenant", q.Tenant},
		{"reference", q.Ref}, {"reason containing", q.Reason}, {"older than", q.Age}} {
		if f.value != "" {
			parts = append(parts, f.label+" "+ledger.PlainText(f.value, 100))
		}
	}
	if len(parts) == 0 {
		return "no filter (every open event you review)"
	}
	return "this filter: " + strings.Join(parts, ", ")
}

// bulkDismissText says what a bulk dismissal did.
func bulkDismissText(dismissed, resolved, refused int) string {
	s := "Dismissed " + strconv.Itoa(dismissed)
	if resolved > 0 {
		s += "; " + strconv.Itoa(resolved) + map[bool]string{true: " was", false: " were"}[resolved == 1] + " already resolved"
	}
	if refused > 0 {
		s += "; " + strconv.Itoa(refused) + map[bool]string{true: " is", false: " are"}[refused == 1] + " not yours to review"
	}
	return s + "."
}
