package web

import (
	"context"
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

// Bulk handling of the escalation queue: select operations (or every one
// matching the filter, resolved here on the server from the filter, not
// from the page), review the list on a confirmation page, then propose;
// and approve several of other owners' proposals after reviewing them one
// by one. Every rule, and the two-person rule, is the resolve service's,
// applied per item.

// bulkRoutes are the bulk actions' pages (owners).
func (es *escalations) bulkRoutes() []ConsoleRoute {
	return []ConsoleRoute{
		{Method: http.MethodPost, Path: "/escalations/bulk/review", Permission: auth.Resolve, handle: es.bulkProposeReview},
		{Method: http.MethodPost, Path: "/escalations/bulk/propose", Permission: auth.Resolve, handle: es.bulkPropose},
		{Method: http.MethodPost, Path: "/escalations/bulk/approve/review", Permission: auth.Resolve, handle: es.bulkApproveReview},
		{Method: http.MethodPost, Path: "/escalations/bulk/approve", Permission: auth.Resolve, handle: es.bulkApprove},
	}
}

// RoleFor implements resolve.RoleScope: each bulk item is recorded under
// the role that lets the person resolve it.
func (r resolverScope) RoleFor(tenant, target string) string {
	return string(r.p.RoleFor(auth.Resolve, tenant, target))
}

// bulkProposeReview is the confirmation page of a bulk proposal: every
// operation it covers, and those named but not the person's to resolve.
func (es *escalations) bulkProposeReview(c echo.Context) error {
	p := auth.FromContext(c.Request().Context())
	ctx, sc := actingAs(c, p, auth.Resolve, "", ""), resolverScope{p}
	form, err := c.FormParams()
	if err != nil {
		return formError("The form could not be read.")
	}
	filter, _ := url.ParseQuery(form.Get("filter"))
	back := escQueryOf(filter).href("")
	kind, why := ledger.ResolutionKind(form.Get("kind")), strings.TrimSpace(form.Get("why"))
	v := views.BulkConfirmPage{Action: "/escalations/bulk/propose", Kind: string(kind), Reason: why, Back: back,
		Button: "Propose for these operations"}
	var refs []resolve.Ref
	if form.Get("scope") == "all" {
		f, err := escQueryOf(filter).filter()
		if err == nil {
			refs, err = es.resolve.Matching(ctx, sc, f)
		}
		if err != nil {
			if ledger.ErrorCode(err) != ledger.EInvalid && ledger.ErrorCode(err) != ledger.ENotFound {
				return err
			}
			v.Problem = ledger.ErrorMessage(err)
		}
	} else {
		refs = operationRefs(form["op"])
	}
	if v.Problem == "" {
		if err := resolve.CheckBulk(len(refs), kind); err != nil {
			v.Problem = ledger.ErrorMessage(err)
		} else if ledger.KindTo(kind) == "" {
			v.Problem = "Choose what happened: confirm not applied, a replay, or supersede."
		} else if why == "" {
			v.Problem = "Give your reason: the evidence you relied on."
		}
	}
	for _, ref := range refs {
		op, err := es.resolve.Operation(ctx, sc, ref.Tenant, ref.ID)
		if err != nil {
			v.Skipped = append(v.Skipped, views.BulkItem{Intent: ledger.PlainText(ref.ID, 100), Tenant: ledger.PlainText(ref.Tenant, 63),
				Result: refusal(err)})
			continue
		}
		v.Items = append(v.Items, opItem(op))
	}
	v.Heading = "Propose “" + kindLabel(kind) + "” for " + countText(len(v.Items), false) + " operations"
	if v.Problem == "" && len(v.Items) == 0 {
		v.Problem = "None of these operations is yours to resolve."
	}
	v.Layout = es.layout(c, "Review a bulk proposal", "escalations")
	status := http.StatusOK
	if v.Problem != "" {
		status = http.StatusUnprocessableEntity
	}
	return es.render(c, status, views.BulkConfirm(v))
}

// bulkPropose proposes one resolution for each confirmed operation.
func (es *escalations) bulkPropose(c echo.Context) error {
	p := auth.FromContext(c.Request().Context())
	ctx, sc := actingAs(c, p, auth.Resolve, "", ""), resolverScope{p}
	form, err := c.FormParams()
	if err != nil {
		return formError("The form could not be read.")
	}
	out, err := es.resolve.ProposeEach(ctx, sc, operationRefs(form["item"]),
		resolve.Proposal{Kind: ledger.ResolutionKind(form.Get("kind")), Reason: form.Get("why")})
	if err != nil {
		return actionError(err)
	}
	return es.bulkResult(c, ctx, sc, out, "proposed", "Proposed; awaiting a second owner's approval")
}

// bulkApproveReview lists each proposal, one by one, before approving.
func (es *escalations) bulkApproveReview(c echo.Context) error {
	p := auth.FromContext(c.Request().Context())
	ctx, sc := actingAs(c, p, auth.Resolve, "", ""), resolverScope{p}
	form, err := c.FormParams()
	if err != nil {
		return formError("The form could not be read.")
	}
	v := views.BulkConfirmPage{Action: "/escalations/bulk/approve", Back: "/escalations/proposals",
		Button: "Approve these proposals"}
	open, missing, err := es.resolve.Proposals(ctx, sc, proposalRefs(form["proposal"]))
	if err != nil {
		if ledger.ErrorCode(err) != ledger.EInvalid {
			return err
		}
		v.Problem = ledger.ErrorMessage(err)
	}
	now := es.now()
	for _, o := range open {
		pv := proposalView(o.Proposal, o.Operation, p, now)
		it := opItem(o.Operation)
		it.Value = o.Proposal.Tenant + "/" + strconv.FormatInt(o.Proposal.ID, 10)
		it.What, it.Reason = pv.What+" — proposed by "+pv.ProposedBy, pv.Reason
		if pv.Mine {
			it.Result = "Your own proposal: another owner approves it."
			v.Skipped = append(v.Skipped, it)
			continue
		}
		v.Items = append(v.Items, it)
	}
	for _, m := range missing {
		v.Skipped = append(v.Skipped, views.BulkItem{Intent: "Proposal " + strconv.FormatInt(m.Resolution.ID, 10),
			Tenant: ledger.PlainText(m.Ref.Tenant, 63), Result: refusal(m.Err)})
	}
	v.Heading = "Approve " + countText(len(v.Items), false) + " proposals"
	if v.Problem == "" && len(v.Items) == 0 {
		v.Problem = "None of these proposals is one you may approve."
	}
	v.Layout = es.layout(c, "Review a bulk approval", "escalations")
	status := http.StatusOK
	if v.Problem != "" {
		status = http.StatusUnprocessableEntity
	}
	return es.render(c, status, views.BulkConfirm(v))
}

// bulkApprove approves each confirmed proposal.
func (es *escalations) bulkApprove(c echo.Context) error {
	p := auth.FromContext(c.Request().Context())
	ctx, sc := actingAs(c, p, auth.Resolve, "", ""), resolverScope{p}
	form, err := c.FormParams()
	if err != nil {
		return formError("The form could not be read.")
	}
	out, err := es.resolve.ApproveEach(ctx, sc, proposalRefs(form["item"]))
	if err != nil {
		return actionError(err)
	}
	return es.bulkResult(c, ctx, sc, out, "approved", "Approved")
}

// bulkResult shows what a bulk action did, item by item.
func (es *escalations) bulkResult(c echo.Context, ctx context.Context, sc resolve.Scope, out []resolve.Outcome, verb, done string) error {
	v := views.BulkResultPage{Back: "/escalations"}
	n := 0
	for _, o := range out {
		it := views.BulkItem{Intent: ledger.PlainText(o.Ref.ID, 100), Tenant: ledger.PlainText(o.Ref.Tenant, 63)}
		if op, err := es.resolve.Operation(ctx, sc, o.Ref.Tenant, o.Ref.ID); err == nil {
			it = opItem(op)
		}
		if o.Err == nil {
			it.Result, it.Done = done, true
			n++
		} else {
			if it.Result = refusal(o.Err); ledger.ErrorCode(o.Err) == ledger.EInternal || ledger.ErrorCode(o.Err) == "" {
				es.log.Error("bulk action", "item", o.Ref.ID, "err", o.Err)
			}
		}
		v.Items = append(v.Items, it)
	}
	v.Heading = countText(n, false) + " of " + countText(len(out), false) + " " + verb
	v.Layout = es.layout(c, "Bulk "+verb, "escalations")
	return es.render(c, http.StatusOK, views.BulkResult(v))
}

// opItem shows op as an item of a bulk action.
func opItem(op ledger.Operation) views.BulkItem {
	return views.BulkItem{Value: op.Tenant + "/" + op.ID, Href: escalationHref(op.Tenant, op.ID),
		Intent: ledger.PlainText(op.IntentRef, 300), Tenant: op.Tenant, Target: op.Target}
}

// refusal says why one item of a bulk action was not done.
func refusal(err error) string {
	switch ledger.ErrorCode(err) {
	case ledger.ENotFound:
		return "Not found among the operations you resolve."
	case ledger.EInvalid, ledger.EConflict, ledger.EStaleFence, ledger.EInvalidTransition, ledger.EForbidden:
		return "Refused: " + ledger.ErrorMessage(err)
	}
	return "Not done: settle met an internal error; try this one again from its page."
}

// operationRefs reads "tenant/operation id" form values; a value of
// another shape names nothing (it is reported as not found).
func operationRefs(values []string) []resolve.Ref {
	refs := make([]resolve.Ref, 0, len(values))
	for _, v := range values {
		tenant, id, _ := strings.Cut(v, "/")
		refs = append(refs, resolve.Ref{Tenant: tenant, ID: id})
	}
	return refs
}

// proposalRefs reads "tenant/proposal id" form values.
func proposalRefs(values []string) []resolve.ProposalRef {
	refs := make([]resolve.ProposalRef, 0, len(values))
	for _, v := range values {
		tenant, id, _ := strings.Cut(v, "/")
		n, _ := strconv.ParseInt(id, 10, 64)
		refs = append(refs, resolve.ProposalRef{Tenant: tenant, ID: n})
	}
	return refs
}
