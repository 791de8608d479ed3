package web

import (
	"context"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"settle/auth"
	"settle/ledger"
	"settle/resolve"
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
	// quarantine holds the rules of the quarantine's review.
	quarantine *resolve.Quarantine
}

func (rv *review) routes() []ConsoleRoute {
	return []ConsoleRoute{
		{Method: http.MethodGet, Path: "/quarantine", Permission: auth.ReviewInbox, handle: rv.quarantinePage},
		{Method: http.MethodGet, Path: "/quarantine/dismiss", Permission: auth.ReviewInbox, handle: rv.bulkDismissReview},
		{Method: http.MethodPost, Path: "/quarantine/dismiss", Permission: auth.ReviewInbox, handle: rv.bulkDismiss},
		{Method: http.MethodGet, Path: "/quarantine/:tenant/:id", Permission: auth.ReviewInbox, Tenanted: true,
			handle: rv.quarantineItemPage},
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
