package web

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"settle/auth"
	"settle/ledger"
	"settle/resolve"
	"settle/views"
)

// The owners' actions on an escalated operation. Every rule is the
// resolve service's; these handlers decode the form, act as the signed-in
// person and show the answer.

// proposeResolution records an owner's proposal for an escalated
// operation of a target they own. A refusal in words re-renders the page
// (422) with the error beside its field and everything typed kept.
func (es *escalations) proposeResolution(c echo.Context) error {
	p := auth.FromContext(c.Request().Context())
	tenant, id := c.Param("tenant"), c.Param("id")
	op, err := es.resolve.Operation(c.Request().Context(), resolverScope{p}, tenant, id)
	if err != nil {
		return actionError(err)
	}
	kind := ledger.ResolutionKind(c.FormValue("kind"))
	ref := c.FormValue("remote_ref")
	form := views.ProposeForm{Kind: views.Field{Value: kept(string(kind), 40)}, RemoteRef: views.Field{Value: kept(ref, 300)},
		Reason: views.Field{Value: kept(c.FormValue("reason"), 500)}, Despite: views.Field{Value: kept(c.FormValue("despite_evidence"), 10)}}
	if kind != ledger.KindConfirmSucceeded {
		ref = "" // the form's object id field belongs to "confirm succeeded" only
	}
	ctx := actingAs(c, p, auth.Resolve, op.Tenant, op.Target)
	_, err = es.resolve.Propose(ctx, resolverScope{p}, op.Tenant, op.ID,
		resolve.Proposal{Kind: kind, RemoteRef: ref, Reason: c.FormValue("reason"), DespiteEvidence: form.Despite.Value != ""})
	if ledger.ErrorCode(err) == ledger.EInvalid {
		msg := ledger.ErrorMessage(err)
		switch resolve.FieldOf(err) {
		case resolve.FieldKind:
			form.Kind.Error = msg
		case resolve.FieldRemoteRef:
			form.RemoteRef.Error = msg
		case resolve.FieldReason:
			form.Reason.Error = msg
		case resolve.FieldDespiteEvidence:
			form.Despite.Error, form.AskDespite = msg, true
		}
		return es.showEscalation(c, http.StatusUnprocessableEntity, escForm{propose: form, problem: msg})
	}
	if err != nil {
		return actionError(err)
	}
	return c.Redirect(http.StatusSeeOther, escalationHref(op.Tenant, op.ID))
}

// approveResolution applies the open proposal named in the form, with the
// approver's confirmations (the form's checkboxes).
func (es *escalations) approveResolution(c echo.Context) error {
	form := views.DecideForm{Despite: views.Field{Value: c.FormValue("despite_evidence")},
		Checked: views.Field{Value: c.FormValue("checked_at_target")}}
	return es.decide(c, &form, func(ctx ctxScope, tenant string, id int64) error {
		_, err := es.resolve.Approve(ctx.ctx, ctx.scope, tenant, id,
			resolve.Approval{DespiteEvidence: form.Despite.Value != "", CheckedAtTarget: form.Checked.Value != ""})
		switch resolve.FieldOf(err) {
		case resolve.FieldDespiteEvidence:
			form.Despite.Error = ledger.ErrorMessage(err)
		case resolve.FieldCheckedAtTarget:
			form.Checked.Error = ledger.ErrorMessage(err)
		}
		return err
	})
}

// rejectResolution closes the open proposal named in the form without
// changing the operation; its proposer withdraws it this way.
func (es *escalations) rejectResolution(c echo.Context) error {
	why := strings.TrimSpace(c.FormValue("reason"))
	form := views.DecideForm{Reason: views.Field{Value: kept(c.FormValue("reason"), 500)}}
	return es.decide(c, &form, func(ctx ctxScope, tenant string, id int64) error {
		if why == "" {
			form.Reason.Error = "Give your reason for rejecting it."
			return formError(form.Reason.Error)
		}
		actor, _ := ledger.ActorOf(ctx.ctx)
		open, err := es.resolve.OpenProposal(ctx.ctx, ctx.scope, tenant, ctx.operation)
		if err == nil && open != nil && ledger.SamePerson(open.ProposedBy, actor.Subject) {
			err = es.resolve.Withdraw(ctx.ctx, ctx.scope, tenant, id, why)
		} else {
			err = es.resolve.Reject(ctx.ctx, ctx.scope, tenant, id, why)
		}
		if ledger.ErrorCode(err) == ledger.EInvalid && form.Reason.Error == "" {
			form.Reason.Error = ledger.ErrorMessage(err)
		}
		return err
	})
}

// kept is a typed value as a re-rendered form keeps it: as typed when it
// is plain text of at most max bytes, else dropped — a NUL, a bidi
// override or 3,000 characters are not echoed back; the error says why.
func kept(s string, max int) string {
	if ledger.PlainText(s, max) != s {
		return ""
	}
	return s
}

// ctxScope is who decides, from where.
type ctxScope struct {
	ctx       context.Context
	scope     resolve.Scope
	operation string
}

// decide finds the open proposal the form names on the URL's operation
// and applies do as p. A proposal of another operation, or none, is 404;
// a refusal in words re-renders the page (422) with form as do left it.
func (es *escalations) decide(c echo.Context, form *views.DecideForm, do func(ctxScope, string, int64) error) error {
	p := auth.FromContext(c.Request().Context())
	sc := resolverScope{p}
	open, err := es.resolve.OpenProposal(c.Request().Context(), sc, c.Param("tenant"), c.Param("id"))
	if err != nil {
		return actionError(err)
	}
	id, err := strconv.ParseInt(c.FormValue("proposal"), 10, 64)
	if err != nil || open == nil || open.ID != id {
		return notFound()
	}
	op, err := es.resolve.Operation(c.Request().Context(), sc, open.Tenant, open.OperationID)
	if err != nil {
		return actionError(err)
	}
	ctx := ctxScope{ctx: actingAs(c, p, auth.Resolve, op.Tenant, op.Target), scope: sc, operation: op.ID}
	err = do(ctx, op.Tenant, id)
	if ledger.ErrorCode(err) == ledger.EInvalid {
		return es.showEscalation(c, http.StatusUnprocessableEntity, escForm{decide: *form, problem: ledger.ErrorMessage(err)})
	}
	if err != nil {
		return actionError(err)
	}
	return c.Redirect(http.StatusSeeOther, escalationHref(op.Tenant, op.ID))
}

// formError refuses a form whose content cannot be used, in words (the
// error page shows an EInvalid's message).
func formError(msg string) error {
	return ledger.Errorf(ledger.EInvalid, "%s", msg)
}

// actionError turns a ledger refusal into a page that says why; other
// errors stay internal.
func actionError(err error) error {
	switch code := ledger.ErrorCode(err); code {
	case ledger.ENotFound:
		return notFound()
	case ledger.EInvalid:
		return err // shown as it is: its message is written for people
	case ledger.EConflict, ledger.EStaleFence, ledger.EInvalidTransition, ledger.EForbidden:
		return &pageError{status: statusOf(code), message: ledger.ErrorMessage(err)}
	}
	return err
}
