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

// findingsForm is what a person typed into a finding's form, kept when the
// action could not be done.
type findingsForm struct {
	item, note, problem string
}

func (rv *review) findingsPage(c echo.Context) error {
	return rv.renderFindings(c, http.StatusOK, findingsForm{})
}

// renderFindings shows the findings p may review, with the status filter
// of the URL: owners see their targets' findings, admins every target's.
func (rv *review) renderFindings(c echo.Context, status int, form findingsForm) error {
	rs := rv.store
	ctx := c.Request().Context()
	p := auth.FromContext(ctx)
	now := rv.clock(c)
	q := quarQueryOf("/findings", c.QueryParams())
	all, tenants := p.Tenants(auth.ReviewInbox)
	v := views.FindingsPage{
		Layout:  rv.layout(c, "Findings", "findings"),
		Filters: q.tabs("Acknowledged"), Status: q.Status, Ref: q.Ref,
		Targets: targetOptions(rv.targets, q.Target), Tenants: tenantOptions(all, tenants, q.Tenant),
		Ages: options(q.Age, queueAges), Kinds: options(q.Kind, findingKinds),
		Problem: form.problem, ProblemItem: form.item, Note: form.note,
	}
	if c.QueryParam("done") == "acknowledged" {
		v.Done = "Acknowledged. Your note is on the finding and in the event log."
	}
	ff, problem := q.findingFilter(p, now)
	if problem != "" {
		v.FilterProblem = problem
		v.ServedIn = servedIn(c)
		return rv.render(c, status, views.Findings(v))
	}
	fs, err := rs.ListFindings(ctx, ff)
	if err != nil {
		return err
	}
	if q.Cursor != "" {
		v.First = q.href("")
	}
	if len(fs) > reviewPageSize {
		fs = fs[:reviewPageSize]
		v.Next = q.href(strconv.FormatInt(fs[len(fs)-1].ID, 10))
	}
	for _, f := range fs {
		if !p.Can(auth.ReviewInbox, f.Tenant, f.Target) {
			continue
		}
		r := findingRow(p, f, ownerOf(rv.targets, f.Target), now)
		if f.Open() && !rv.readOnly {
			r.AckAction = "/findings/" + url.PathEscape(f.Tenant) + "/" + r.ID + "/acknowledge"
		}
		v.Rows = append(v.Rows, r)
	}
	if len(v.Rows) == 0 {
		v.Empty = map[string]string{"open": "No audit finding waits for review.",
			"resolved": "No audit finding has been acknowledged yet.", "all": "The auditor has found nothing."}[q.Status]
		if q.filtered() {
			v.Empty = "No audit finding matches these filters."
		}
	}
	v.ServedIn = servedIn(c)
	return rv.render(c, status, views.Findings(v))
}

// findingRow says what a finding means, in words; the operation is linked
// when p may read it.
func findingRow(p *auth.Principal, f ledger.Finding, owner string, now time.Time) views.FindingRow {
	r := views.FindingRow{
		ID: strconv.FormatInt(f.ID, 10), Kind: string(f.Kind), Tenant: f.Tenant, Target: f.Target,
		Operation: f.OperationID, Found: timeView(&f.FoundAt, now, ""), Open: f.Open(),
	}
	for _, id := range f.RemoteIDs {
		r.RemoteIDs = append(r.RemoteIDs, shownValue(id))
	}
	r.Title, r.Meaning = findingText(f, owner)
	if p.Can(auth.ViewOperations, f.Tenant, "") {
		r.OperationHref = "/operations/" + url.PathEscape(f.Tenant) + "/" + url.PathEscape(f.OperationID)
		r.Href = findingHref(f)
	}
	if a := f.Acknowledged; a != nil {
		r.Acknowledged = "Acknowledged by " + orName(a.Name, a.Subject) + ", " + timeText(a.At, now) +
			": " + ledger.PlainText(a.Note, 500)
	}
	return r
}

// findingText is a finding's title and what it means for the people who
// act on it.
func findingText(f ledger.Finding, owner string) (title, meaning string) {
	team := orTeam(owner)
	switch f.Kind {
	case ledger.FindingDuplicate:
		return "Duplicate at " + f.Target + ": " + countText(len(f.RemoteIDs), false) + " objects carry this operation's reference",
			"The target applied this operation more than once. settle keeps it Confirmed; " + team +
				" checks the objects below at the target and reverses the extra ones there."
	case ledger.FindingLoss:
		return "Missing at " + f.Target + ": no object for an operation settle confirmed",
			"settle confirmed this operation, and the target now holds nothing for it. " + team +
				" asks the target what happened and tells the tenant if it was lost."
	case ledger.FindingPhantom:
		return "Found at " + f.Target + ": an object for an operation settle calls Not applied",
			"The tenant was told nothing happened, and the target holds an object for it. " + team +
				" checks the object below and reverses it or tells the tenant."
	}
	return "Audit finding at " + f.Target, "The auditor found a discrepancy; " + team + " reviews it."
}

// findingAcknowledge records that the person has read an open finding,
// with their note.
func (rv *review) findingAcknowledge(c echo.Context) error {
	rs := rv.store
	ctx := c.Request().Context()
	p := auth.FromContext(ctx)
	tenant, id, err := reviewItem(c, p)
	if err != nil || tenant == "" {
		return notFound()
	}
	found, err := rs.Finding(ctx, tenant, id)
	switch {
	case ledger.ErrorCode(err) == ledger.ENotFound:
		return notFound()
	case err != nil:
		return err
	case !found.Open() || !p.Can(auth.ReviewInbox, tenant, found.Target):
		return notFound()
	}
	note := strings.TrimSpace(c.FormValue("note"))
	if err := ledger.CheckReviewNote("note", note); err != nil {
		return rv.renderFindings(c, http.StatusUnprocessableEntity, findingsForm{item: strconv.FormatInt(id, 10),
			note: note, problem: "Add a note on what is being done about it: " + ledger.ErrorMessage(err) + "."})
	}
	err = rs.AcknowledgeFinding(actingAs(c, p, auth.ReviewInbox, tenant, found.Target), tenant, id, note)
	if ledger.ErrorCode(err) == ledger.ENotFound {
		return notFound()
	}
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/findings?done=acknowledged")
}

// operationReview is what the operation's page shows of its review: its
// open findings, for everyone who may read it (support should know a
// finding is being looked at), and the review actions taken about it.
func (o *operationPages) operationReview(ctx context.Context, p *auth.Principal, op ledger.Operation,
	now time.Time) (views.OperationReview, []ledger.Finding, error) {
	var v views.OperationReview
	fs, err := o.store.ListFindings(ctx, ledger.FindingFilter{Tenants: []string{op.Tenant}, OperationID: op.ID, Open: true})
	if err != nil {
		return v, nil, err
	}
	owner := ownerOf(o.targets, op.Target)
	for _, f := range fs {
		v.Findings = append(v.Findings, findingRow(p, f, owner, now))
	}
	if len(fs) > 0 && p.Can(auth.ReviewInbox, op.Tenant, op.Target) {
		v.ReviewHref = "/findings"
	}
	return v, fs, nil
}

// orName is a finding acknowledger's name, or their subject for one
// recorded before names were kept.
func orName(name, subject string) string {
	if name != "" {
		return name
	}
	return subject
}
