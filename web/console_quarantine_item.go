package web

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"settle/auth"
	"settle/ledger"
	"settle/resolve"
	"settle/views"
)

// One quarantined item's page and its two actions. A validation error
// re-renders the page (422) with the problem beside its field and what
// was typed kept; an item resolved meanwhile answers 409 with who did it.

// quarantineForms are the item's forms as the person typed them.
type quarantineForms struct {
	operation, linkReason, dismissReason views.Field
	problem                              string
}

func (rv *review) quarantineItemPage(c echo.Context) error {
	return rv.renderItem(c, http.StatusOK, quarantineForms{})
}

// renderItem shows the URL's item with forms as typed.
func (rv *review) renderItem(c echo.Context, status int, forms quarantineForms) error {
	ctx := c.Request().Context()
	p := auth.FromContext(ctx)
	tenant, id, err := reviewItem(c, p)
	if err != nil {
		return err
	}
	q, err := rv.quarantine.Item(ctx, reviewerScope{p}, tenant, id)
	if err != nil {
		return actionError(err)
	}
	candidates, err := rv.quarantine.Candidates(ctx, q)
	if err != nil {
		return err
	}
	now := rv.clock(c)
	event := shownOr(q.EventID, "with no id")
	v := views.QuarantineItemPage{
		Layout: rv.layout(c, "Quarantined event "+event.Text, "quarantine"), ID: strconv.FormatInt(q.ID, 10),
		Heading: "Quarantined event " + event.Text, Back: "/quarantine", Status: "Open: waiting for review",
		Reason: ledger.PlainText(q.Reason, 300), Target: q.Target, EventID: shownOr(q.EventID, "—"),
		Reference: shownOr(q.Reference, "—"), Claimed: shownOr(q.Tenant, "none"), Tenant: reviewersOf(q),
		RemoteID: shownOr(q.RemoteID, "—"), Verified: verifiedItemText(q), At: timeView(&q.At, now, ""),
		Operation: q.OperationID, Resolved: resolutionView(p, q, now), Problem: forms.problem,
		LinkOperation: forms.operation, LinkReason: forms.linkReason, DismissReason: forms.dismissReason,
		LinkOperationHelp: "Operation of tenant " + shownText(q.ScopeTenant()) + " (its id or any of its references)",
	}
	if q.OperationID != "" && p.Can(auth.ViewOperations, q.OpTenant, "") {
		v.OperationHref = operationHref(q.OpTenant, q.OperationID)
	}
	for _, op := range candidates {
		cv := views.QuarantineCandidate{ID: op.ID, Intent: ledger.PlainText(op.IntentRef, 300),
			Status: op.State.Plain(ownerOf(rv.targets, op.Target))}
		if p.Can(auth.ViewOperations, op.Tenant, "") {
			cv.Href = operationHref(op.Tenant, op.ID)
		}
		v.Candidates = append(v.Candidates, cv)
	}
	if len(candidates) == 1 && v.LinkOperation.Value == "" && status == http.StatusOK {
		v.LinkOperation.Value = candidates[0].ID
	}
	switch {
	case v.Resolved != nil:
		v.Already = alreadyText(v.Resolved)
	case !rv.readOnly:
		base := quarantineHref(q)
		v.DismissAction = base + "/dismiss"
		if q.ScopeTenant() != "" {
			v.LinkAction = base + "/link"
		}
	}
	v.ServedIn = servedIn(c)
	return rv.render(c, status, views.QuarantineItem(v))
}

// verifiedItemText says whether the event reached settle authenticated.
func verifiedItemText(q ledger.QuarantineItem) string {
	if q.DeliveryID != 0 {
		return "Verified: its signature was checked. settle could not attribute it on its own; a person weighs it."
	}
	return "Not verified: settle holds no signed delivery for it."
}

// quarantineLink attributes an open item to an operation of its tenant,
// named by its id or any of its references.
func (rv *review) quarantineLink(c echo.Context) error {
	ctx := c.Request().Context()
	p := auth.FromContext(ctx)
	tenant, id, err := reviewItem(c, p)
	if err != nil {
		return err
	}
	forms := quarantineForms{operation: views.Field{Value: kept(c.FormValue("operation"), 300)},
		linkReason: views.Field{Value: kept(c.FormValue("reason"), 500)}}
	_, err = rv.quarantine.Link(actingAs(c, p, auth.ReviewInbox, tenant, ""), reviewerScope{p}, tenant, id,
		c.FormValue("operation"), c.FormValue("reason"))
	if ledger.ErrorCode(err) == ledger.EInvalid {
		msg := ledger.ErrorMessage(err)
		if resolve.FieldOf(err) == resolve.FieldReason {
			forms.linkReason.Error = msg
		} else {
			forms.operation.Error = msg
		}
		forms.problem = msg
		return rv.renderItem(c, http.StatusUnprocessableEntity, forms)
	}
	return rv.afterAction(c, err, "linked")
}

// quarantineDismiss closes an open item with the reviewer's reason.
func (rv *review) quarantineDismiss(c echo.Context) error {
	ctx := c.Request().Context()
	p := auth.FromContext(ctx)
	tenant, id, err := reviewItem(c, p)
	if err != nil {
		return err
	}
	err = rv.quarantine.Dismiss(actingAs(c, p, auth.ReviewInbox, tenant, ""), reviewerScope{p}, tenant, id, c.FormValue("reason"))
	if ledger.ErrorCode(err) == ledger.EInvalid {
		msg := ledger.ErrorMessage(err)
		return rv.renderItem(c, http.StatusUnprocessableEntity, quarantineForms{problem: msg,
			dismissReason: views.Field{Value: kept(c.FormValue("reason"), 500), Error: msg}})
	}
	return rv.afterAction(c, err, "dismissed")
}

// afterAction answers an item's action: back to the list with what was
// done, the item's page with who resolved it first (409), or the error.
func (rv *review) afterAction(c echo.Context, err error, done string) error {
	switch ledger.ErrorCode(err) {
	case "":
		return c.Redirect(http.StatusSeeOther, "/quarantine?done="+done)
	case ledger.EConflict:
		return rv.renderItem(c, http.StatusConflict, quarantineForms{})
	}
	return actionError(err)
}
