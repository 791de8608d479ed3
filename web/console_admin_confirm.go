package web

import (
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"settle/auth"
	"settle/ledger"
	"settle/views"
)

// The admin's destructive and lasting changes are confirmed first: a GET
// page says what will happen and its form POSTs the change with CSRF, so
// one stray click does nothing and no JavaScript is needed.

// renderConfirm renders a confirmation page.
func (ad *admin) renderConfirm(c echo.Context, title string, v views.ConfirmPage) error {
	v.Layout = ad.layout(c, title, "admin")
	v.ServedIn = servedIn(c)
	return ad.render(c, http.StatusOK, views.Confirm(v))
}

// mayCreateTenants: only an administrator of every tenant adds one; an
// administrator bound to some tenants manages those it was given.
func mayCreateTenants(p *auth.Principal) error {
	if all, _ := p.Tenants(auth.ManageTokens); !all {
		return &pageError{status: http.StatusForbidden,
			message: "Only an administrator of every tenant creates tenants. Ask one if a tenant is missing."}
	}
	return nil
}

// confirmTenant shows the tenant about to be created, with the known
// tenants beside it, so that a misspelling is seen before it is made.
func (ad *admin) confirmTenant(c echo.Context) error {
	p := auth.FromContext(c.Request().Context())
	if err := mayCreateTenants(p); err != nil {
		return err
	}
	name := c.QueryParam("tenant")
	problem := ""
	if err := ledger.ValidateNewTenant(name); err != nil {
		problem = ledger.ErrorMessage(err)
	} else if known, err := ad.store.TenantKnown(c.Request().Context(), name); err != nil {
		return err
	} else if known {
		problem = ledger.ErrorMessage(ledger.TenantExists(name))
	}
	if problem != "" {
		return ad.adminProblem(c, http.StatusUnprocessableEntity, problem)
	}
	tenants, err := ad.store.ListTenants(c.Request().Context())
	if err != nil {
		return err
	}
	return ad.renderConfirm(c, "Create tenant "+name, views.ConfirmPage{
		Heading: "Create tenant “" + name + "”?",
		Facts: []views.Fact{{ID: "tenant", Label: "New tenant", Value: name},
			{ID: "existing", Label: "Tenants already known", Value: tenantNames(tenants)}},
		Consequences: newTenantConsequences,
		Action:       "/admin/tenants", Hidden: []views.HiddenField{{Name: "tenant", Value: name}},
		Button: "Create the tenant", Cancel: "/admin", TestID: "confirm-create-tenant",
	})
}

// newTenantConsequences say what creating a tenant does.
var newTenantConsequences = []string{
	"settle will accept API tokens, a callback endpoint and request parameters for this tenant.",
	"The name cannot be changed later: check its spelling against the tenants already known.",
	"The creation is recorded with your name in the tenant's recent changes.",
}

// tenantNames lists the known tenants for the confirmation page.
func tenantNames(ts []ledger.Tenant) string {
	if len(ts) == 0 {
		return "none yet"
	}
	s := ""
	for i, t := range ts {
		if i > 0 {
			s += ", "
		}
		s += t.ID
	}
	return s
}

// createTenant creates the confirmed tenant and opens its page.
func (ad *admin) createTenant(c echo.Context) error {
	p := auth.FromContext(c.Request().Context())
	if err := mayCreateTenants(p); err != nil {
		return err
	}
	name := c.FormValue("tenant")
	err := ad.store.CreateTenant(actingAs(c, p, auth.ManageTokens, name, ""), name, ad.now())
	switch ledger.ErrorCode(err) {
	case "":
		ad.log.Info("tenant created", "tenant", name, "request_id", c.Response().Header().Get(echo.HeaderXRequestID))
		return c.Redirect(http.StatusSeeOther, adminTenantHref(name))
	case ledger.EInvalid, ledger.EConflict:
		return ad.adminProblem(c, http.StatusUnprocessableEntity, ledger.ErrorMessage(err))
	default:
		return err
	}
}

// adminProblem re-renders the admin overview with a refusal at the top.
func (ad *admin) adminProblem(c echo.Context, status int, problem string) error {
	p := auth.FromContext(c.Request().Context())
	all, bound := p.Tenants(auth.ManageTokens)
	known, err := ad.store.ListTenants(c.Request().Context())
	if err != nil {
		return err
	}
	isKnown := map[string]bool{}
	for _, t := range known {
		isKnown[t.ID] = true
	}
	v := views.AdminPage{AllTenants: all, ReadOnlyText: readOnlyText(ad.readOnly), NewTenant: "/admin/new-tenant",
		Problem: problem}
	v.Tenants, v.TenantsEmpty = adminTenantLinks(all, bound, isKnown, known)
	v.Layout = ad.layout(c, "Admin", "admin")
	v.ServedIn = servedIn(c)
	return ad.render(c, status, views.Admin(v))
}

// confirmRevoke shows the token about to be revoked and what revoking
// does to the clients that use it.
func (ad *admin) confirmRevoke(c echo.Context) error {
	_, tenant, err := ad.adminTenant(c, auth.ManageTokens)
	if err != nil {
		return err
	}
	tokens, err := ad.store.ListTokens(c.Request().Context(), tenant)
	if err != nil {
		return err
	}
	now := ad.now()
	for _, t := range tokens {
		if t.ID != c.Param("id") {
			continue
		}
		if t.RevokedAt != nil {
			// Already done: the tenant's page says when.
			return c.Redirect(http.StatusSeeOther, adminTenantHref(tenant))
		}
		name := ledger.PlainText(t.Name, 4*ledger.MaxTokenName)
		used := timeView(t.LastUsedAt, now, "never")
		return ad.renderConfirm(c, "Revoke token "+name, views.ConfirmPage{
			Heading: "Revoke the token “" + name + "”?",
			Facts: []views.Fact{{ID: "tenant", Label: "Tenant", Value: tenant},
				{ID: "token", Label: "Token", Value: name + " (" + t.ID + ")"},
				{ID: "last-used", Label: "Last used", Time: &used}},
			Consequences: revokeConsequences(t.LastUsedAt != nil),
			Action:       adminTenantHref(tenant) + "/tokens/" + url.PathEscape(t.ID) + "/revoke",
			Button:       "Revoke the token", Danger: true, Cancel: adminTenantHref(tenant), TestID: "confirm-revoke",
		})
	}
	return notFound()
}

// revokeConsequences say what revoking a token does.
func revokeConsequences(used bool) []string {
	c := []string{
		"Every request sent with this token is refused (401) from now on; it cannot be turned back on.",
		"A service still using it needs a new token first: create one, deploy it, then revoke this one.",
	}
	if !used {
		c[1] = "It has never been used, so no service should depend on it."
	}
	return append(c, "The revocation is recorded with your name in the tenant's recent changes.")
}

// confirmRemoveCallback shows the endpoint about to be removed.
func (ad *admin) confirmRemoveCallback(c echo.Context) error {
	_, tenant, err := ad.adminTenant(c, auth.ManageHooks)
	if err != nil {
		return err
	}
	cb, err := ad.store.GetCallback(c.Request().Context(), tenant)
	if ledger.ErrorCode(err) == ledger.ENotFound {
		return c.Redirect(http.StatusSeeOther, adminTenantHref(tenant))
	}
	if err != nil {
		return err
	}
	return ad.renderConfirm(c, "Remove the callback endpoint", views.ConfirmPage{
		Heading: "Remove the callback endpoint of " + tenant + "?",
		Facts: []views.Fact{{ID: "tenant", Label: "Tenant", Value: tenant},
			{ID: "url", Label: "Endpoint", Value: ledger.PlainText(cb.URL, 2048)}},
		Consequences: []string{
			"settle stops notifying this endpoint; the tenant's services must poll for outcomes.",
			"Notifications not yet delivered are discarded, not kept for a later endpoint.",
			"The removal and the URL are recorded with your name in the tenant's recent changes.",
		},
		Action: adminTenantHref(tenant) + "/callback/remove",
		Button: "Remove the endpoint", Danger: true, Cancel: adminTenantHref(tenant), TestID: "confirm-remove-callback",
	})
}
