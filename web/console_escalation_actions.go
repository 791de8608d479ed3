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
)

// The owners' actions on an escalated operation. Every rule is the
// resolve service's; these handlers decode the form, act as the signed-in
// person and show the answer.

// proposeResolution records an owner's proposal for an escalated
// operation of a target they own.
func (es *escalations) proposeResolution(c echo.Context) error {
	p := auth.FromContext(c.Request().Context())
	tenant, id := c.Param("tenant"), c.Param("id")
	op, err := es.resolve.Operation(c.Request().Context(), resolverScope{p}, tenant, id)
	if err != nil {
		return actionError(err)
	}
	kind := ledger.ResolutionKind(c.FormValue("kind"))
	ref := c.FormValue("remote_ref")
	if kind != ledger.KindConfirmSucceeded {
		ref = "" // the form's object id field belongs to "confirm succeeded" only
	}
	ctx := actingAs(c, p, auth.Resolve, op.Tenant, op.Target)
	if _, err := es.resolve.Propose(ctx, resolverScope{p}, op.Tenant, op.ID,
		resolve.Proposal{Kind: kind, RemoteRef: ref, Reason: c.FormValue("reason")}); err != nil {
		return actionError(err)
	}
	return c.Redirect(http.StatusSeeOther, escalationHref(op.Tenant, op.ID))
}

// approveResolution applies the open proposal named in the form.
func (es *escalations) approveResolution(c echo.Context) error {
	return es.decide(c, func(ctx ctxScope, tenant string, id int64) error {
		_, err := es.resolve.Approve(ctx.ctx, ctx.scope, tenant, id)
		return err
	})
}

// rejectResolution closes the open proposal named in the form without
// changing the operation; its proposer withdraws it this way.
func (es *escalations) rejectResolution(c echo.Context) error {
	why := strings.TrimSpace(c.FormValue("reason"))
	if why == "" {
		return formError("Give your reason for rejecting it.")
	}
	return es.decide(c, func(ctx ctxScope, tenant string, id int64) error {
		actor, _ := ledger.ActorOf(ctx.ctx)
		open, err := es.resolve.OpenProposal(ctx.ctx, ctx.scope, tenant, ctx.operation)
		if err == nil && open != nil && ledger.SamePerson(open.ProposedBy, actor.Subject) {
			return es.resolve.Withdraw(ctx.ctx, ctx.scope, tenant, id, why)
		}
		return es.resolve.Reject(ctx.ctx, ctx.scope, tenant, id, why)
	})
}

// ctxScope is who decides, from where.
type ctxScope struct {
	ctx       context.Context
	scope     resolve.Scope
	operation string
}

// decide finds the open proposal the form names on the URL's operation
// and applies do as p. A proposal of another operation, or none, is 404.
func (es *escalations) decide(c echo.Context, do func(ctxScope, string, int64) error) error {
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
	if err := do(ctx, op.Tenant, id); err != nil {
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
