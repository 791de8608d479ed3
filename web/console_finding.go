package web

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/labstack/echo/v4"

	"settle/auth"
	"settle/ledger"
	"settle/views"
)

// findingHref is the read-only page of one finding.
func findingHref(f ledger.Finding) string {
	return "/findings/" + url.PathEscape(f.Tenant) + "/" + strconv.FormatInt(f.ID, 10)
}

// findingPage shows one audit finding, read-only, to anyone who may read
// the operation it concerns: support, answering the customer, needs to see
// what the auditor found (the operation's banner links here), while
// acknowledging it stays with the target's owners (POST …/acknowledge,
// ReviewInbox). A finding the viewer may not see answers exactly like an
// unknown one.
func (rv *review) findingPage(c echo.Context) error {
	ctx := c.Request().Context()
	p := auth.FromContext(ctx)
	tenant := c.Param("tenant")
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 || !ledger.ValidTenant(tenant) || !p.Can(auth.ViewOperations, tenant, "") {
		return notFound()
	}
	f, err := rv.store.Finding(ctx, tenant, id)
	switch {
	case ledger.ErrorCode(err) == ledger.ENotFound:
		return notFound()
	case err != nil:
		return err
	case !p.Can(auth.ViewOperations, tenant, f.Target):
		return notFound()
	}
	owner := ownerOf(rv.targets, f.Target)
	r := findingRow(p, f, owner, rv.clock(c))
	v := views.FindingPage{Layout: rv.layout(c, r.Title, "operations"), Row: r}
	if p.Can(auth.ReviewInbox, tenant, f.Target) {
		v.ReviewHref = "/findings"
	} else {
		v.Note = "Only " + orTeam(owner) + " and administrators act on findings; this page shows what they see."
	}
	v.ServedIn = servedIn(c)
	return rv.render(c, http.StatusOK, views.Finding(v))
}
