package web

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"settle/auth"
	"settle/ledger"
	"settle/reconciler"
	"settle/target"
)

// proposeResolution records an owner's proposal for an escalated
// operation of a target they own. "Confirm succeeded" is checked by a
// lookup first when the contract has one; a replay is accepted only while
// the window, less the timeout and the replay margin, is open.
func (s *server) proposeResolution(c echo.Context) error {
	ctx := c.Request().Context()
	p := auth.FromContext(ctx)
	op, err := s.ownedOperation(ctx, p, c.Param("tenant"), c.Param("id"))
	if err != nil {
		return err
	}
	kind := ledger.ResolutionKind(c.FormValue("kind"))
	r := ledger.Resolution{Tenant: op.Tenant, OperationID: op.ID, Kind: kind, To: ledger.KindTo(kind),
		RemoteRef: strings.TrimSpace(c.FormValue("remote_ref")), Reason: strings.TrimSpace(c.FormValue("reason"))}
	if r.To == "" {
		return formError("Choose what happened: confirm succeeded, confirm not applied, or a replay.")
	}
	if r.Reason == "" {
		return formError("Give your reason: the evidence you relied on.")
	}
	if kind != ledger.KindConfirmSucceeded {
		r.RemoteRef = "" // the form's object id field belongs to "confirm succeeded" only
	}
	ct := s.contract(op.Target)
	switch kind {
	case ledger.KindConfirmSucceeded:
		if r.RemoteRef == "" {
			return formError("“Confirm succeeded” needs the target's object id.")
		}
		// Checked before it is sent to the target in a lookup or stored.
		if err := ledger.CheckProviderText("remote_ref", r.RemoteRef); err != nil {
			return err
		}
		if err := s.confirmByLookup(ctx, ct, op, r.RemoteRef); err != nil {
			return err
		}
	case ledger.KindReplay:
		if _, ok := replayAnswer(ct, op, s.now()); !ok {
			return formError("A same-key replay is not possible for this operation any more: see the third question.")
		}
	case ledger.KindSupersede:
		if err := s.confirmAbsent(ctx, ct, op); err != nil {
			return err
		}
	}
	rs, err := s.resolutions()
	if err != nil {
		return err
	}
	if _, err := rs.Propose(actingAs(c, p, auth.Resolve, op.Tenant, op.Target), r); err != nil {
		return actionError(err)
	}
	return c.Redirect(http.StatusSeeOther, escalationHref(op.Tenant, op.ID))
}

// confirmByLookup asks the target whether it holds ref as op's matching
// object, with the reconciler's own check; nothing is asked when the
// contract has no lookup (the second owner's approval is then the check).
func (s *server) confirmByLookup(ctx context.Context, ct *target.Contract, op ledger.Operation, ref string) error {
	if ct == nil || ct.Lookup == nil {
		return nil
	}
	full, err := s.store.Get(ctx, op.Tenant, op.ID) // the match needs the approved payload
	if err != nil {
		return err
	}
	if _, err := reconciler.ConfirmObject(ctx, s.client, ct, full, ref); err != nil {
		return actionError(err)
	}
	return nil
}

// confirmAbsent asks the target whether it holds any object carrying op's
// reference; a supersede needs it to hold none. Unlike "confirm
// succeeded" there is no second owner's word to fall back on: without a
// lookup, absence cannot be confirmed and supersede is refused.
func (s *server) confirmAbsent(ctx context.Context, ct *target.Contract, op ledger.Operation) error {
	if ct == nil || ct.Lookup == nil {
		return formError(noSupersede(op.Target))
	}
	if _, err := reconciler.ConfirmAbsent(ctx, s.client, ct, op, s.now()); err != nil {
		return actionError(err)
	}
	return nil
}

// noSupersede says why supersede is not offered for a target.
func noSupersede(targetName string) string {
	return "Supersede is not offered: the contract for " + targetName +
		" has no lookup, so settle cannot confirm that the target holds nothing under this operation's reference."
}

// approveResolution applies the open proposal named in the form, by an
// owner of the operation's target who did not propose it. A supersede is
// checked against the target again (absence may have changed since the
// proposal), and its successor's payload is rebound by the contract.
func (s *server) approveResolution(c echo.Context) error {
	return s.decide(c, func(ctx context.Context, rs ledger.ResolutionStore, r ledger.Resolution) error {
		if r.Kind != ledger.KindSupersede {
			_, err := rs.Approve(ctx, r.Tenant, r.ID)
			return err
		}
		op, err := s.store.Get(ctx, r.Tenant, r.OperationID)
		if err != nil {
			return err
		}
		ct := s.contract(op.Target)
		if err := s.confirmAbsent(ctx, ct, op); err != nil {
			return err
		}
		_, _, err = rs.ApproveSupersede(ctx, r.Tenant, r.ID, ct.Rebind)
		return err
	})
}

// rejectResolution closes the open proposal named in the form without
// changing the operation; the proposer may withdraw their own this way.
func (s *server) rejectResolution(c echo.Context) error {
	why := strings.TrimSpace(c.FormValue("reason"))
	if why == "" {
		return formError("Give your reason for rejecting it.")
	}
	return s.decide(c, func(ctx context.Context, rs ledger.ResolutionStore, r ledger.Resolution) error {
		return rs.Reject(ctx, r.Tenant, r.ID, why)
	})
}

// decide finds the open proposal the form names on the URL's operation
// and applies do as p. A proposal of another operation, or none, is 404.
func (s *server) decide(c echo.Context, do func(context.Context, ledger.ResolutionStore, ledger.Resolution) error) error {
	ctx := c.Request().Context()
	p := auth.FromContext(ctx)
	op, err := s.ownedOperation(ctx, p, c.Param("tenant"), c.Param("id"))
	if err != nil {
		return err
	}
	id, err := strconv.ParseInt(c.FormValue("proposal"), 10, 64)
	if err != nil {
		return notFound()
	}
	open, err := s.openProposalOf(ctx, op)
	if err != nil {
		return err
	}
	if open == nil || open.ID != id {
		return notFound()
	}
	rs, err := s.resolutions()
	if err != nil {
		return err
	}
	if err := do(actingAs(c, p, auth.Resolve, op.Tenant, op.Target), rs, *open); err != nil {
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
