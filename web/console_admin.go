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
	"settle/deliver"
	"settle/ledger"
	"settle/views"
)

// givenUpShown is how many of a tenant's latest given-up notifications its
// admin page lists.
const givenUpShown = 10

// admin is the console's pages for API tokens and callbacks (admins):
// the read-only switch, each tenant's tokens, callback endpoint, given-up
// notifications, request parameters and recent admin actions.
type admin struct {
	pages
	store interface {
		ledger.TenantStore
		ListTokens(ctx context.Context, tenant string) ([]ledger.Token, error)
		CreateToken(ctx context.Context, t ledger.Token) error
		GetCallback(ctx context.Context, tenant string) (ledger.Callback, error)
		SetCallback(ctx context.Context, tenant, url string, secret []byte, now time.Time) error
		RemoveCallback(ctx context.Context, tenant string) error
		GivenUpNotifications(ctx context.Context, tenant string, limit int) (ledger.GivenUp, error)
		RetryGivenUp(ctx context.Context, tenant string, now time.Time) (int, error)
		CallbackDelivery(ctx context.Context, tenant string) (ledger.CallbackDelivery, error)
		ListTenantParams(ctx context.Context, tenant string) ([]ledger.TenantParam, error)
		Actions(ctx context.Context, f ledger.ActionFilter) ([]ledger.Action, error)
	}
	// tokens revokes: the server's TokenCache, so that this replica's API
	// refuses a revoked token at once.
	tokens interface {
		RevokeToken(ctx context.Context, tenant, id string, t time.Time) error
	}
	callbackPolicy ledger.CallbackPolicy // where an admin may point a callback
	callbackClient *http.Client          // sends test deliveries, guarded by callbackPolicy
}

// callbackTestTimeout bounds a test delivery: the admin waits for it.
const callbackTestTimeout = 10 * time.Second

func (ad *admin) routes() []ConsoleRoute {
	return []ConsoleRoute{
		{Method: http.MethodGet, Path: "/admin", Permission: auth.ManageTokens, handle: ad.adminPage},
		// Creating a tenant: GET confirms the name, POST creates it. The
		// handlers let only an administrator of every tenant do it.
		{Method: http.MethodGet, Path: "/admin/new-tenant", Permission: auth.ManageTokens, handle: ad.confirmTenant},
		{Method: http.MethodPost, Path: "/admin/tenants", Permission: auth.ManageTokens, handle: ad.createTenant},
		{Method: http.MethodGet, Path: "/admin/tenants/:tenant", Permission: auth.ManageTokens, Tenanted: true,
			handle: ad.adminTenantPage},
		{Method: http.MethodPost, Path: "/admin/tenants/:tenant/tokens", Permission: auth.ManageTokens, Tenanted: true,
			handle: ad.createToken},
		{Method: http.MethodGet, Path: "/admin/tenants/:tenant/tokens/:id/revoke", Permission: auth.ManageTokens, Tenanted: true,
			handle: ad.confirmRevoke},
		{Method: http.MethodPost, Path: "/admin/tenants/:tenant/tokens/:id/revoke", Permission: auth.ManageTokens, Tenanted: true,
			handle: ad.revokeToken},
		{Method: http.MethodPost, Path: "/admin/tenants/:tenant/callback", Permission: auth.ManageHooks, Tenanted: true,
			handle: ad.setCallback},
		{Method: http.MethodGet, Path: "/admin/tenants/:tenant/callback/remove", Permission: auth.ManageHooks, Tenanted: true,
			handle: ad.confirmRemoveCallback},
		{Method: http.MethodPost, Path: "/admin/tenants/:tenant/callback/remove", Permission: auth.ManageHooks, Tenanted: true,
			handle: ad.removeCallback},
		{Method: http.MethodPost, Path: "/admin/tenants/:tenant/callback/retry", Permission: auth.ManageHooks, Tenanted: true,
			handle: ad.retryCallbacks},
		{Method: http.MethodPost, Path: "/admin/tenants/:tenant/callback/test", Permission: auth.ManageHooks, Tenanted: true,
			handle: ad.testCallback},
	}
}

// adminPage shows the read-only switch and the known tenants the
// administrator manages, to pick from. ?tenant= opens a known one;
// an unknown name is refused, not turned into a page for a tenant
// nobody created.
func (ad *admin) adminPage(c echo.Context) error {
	p := auth.FromContext(c.Request().Context())
	all, bound := p.Tenants(auth.ManageTokens)
	v := views.AdminPage{AllTenants: all, ReadOnlyText: readOnlyText(ad.readOnly), NewTenant: "/admin/new-tenant"}
	known, err := ad.store.ListTenants(c.Request().Context())
	if err != nil {
		return err
	}
	isKnown := map[string]bool{}
	for _, t := range known {
		isKnown[t.ID] = true
	}
	if t := c.QueryParam("tenant"); t != "" {
		switch {
		case !ledger.ValidTenant(t) || !p.Can(auth.ManageTokens, t, ""):
			v.Problem = "You cannot manage tenant “" + ledger.PlainText(t, 63) + "”."
		case !isKnown[t]:
			v.Problem = ledger.ErrorMessage(ledger.UnknownTenant(t))
		default:
			return c.Redirect(http.StatusSeeOther, adminTenantHref(t))
		}
	}
	v.Tenants, v.TenantsEmpty = adminTenantLinks(all, bound, isKnown, known)
	v.Layout = ad.layout(c, "Admin", "admin")
	v.ServedIn = servedIn(c)
	return ad.render(c, http.StatusOK, views.Admin(v))
}

// adminTenantLinks lists the tenants to pick from: every known one for an
// administrator of all tenants, otherwise the bound ones, each marked when
// settle does not know it yet (an administrator of every tenant creates
// it).
func adminTenantLinks(all bool, bound []string, isKnown map[string]bool, known []ledger.Tenant) ([]views.Link, string) {
	var links []views.Link
	if all {
		for _, t := range known {
			links = append(links, views.Link{Label: t.ID, Href: adminTenantHref(t.ID)})
		}
		return links, "settle knows no tenant yet: create the first one below."
	}
	for _, t := range bound {
		label := t
		if !isKnown[t] {
			label += " (not created yet: ask an administrator of every tenant)"
		}
		links = append(links, views.Link{Label: label, Href: adminTenantHref(t)})
	}
	return links, "You manage no tenant."
}

// readOnlyText says what the read-only switch is set to. It is set when
// the server starts, not here: a console switch would let one stolen
// session turn the safety off.
func readOnlyText(on bool) string {
	if on {
		return "On: this server refuses every change made in the console. It is set when settle serve starts (--read-only)."
	}
	return "Off: changes made in the console are accepted. Start settle serve with --read-only to refuse them all."
}

func adminTenantHref(tenant string) string { return "/admin/tenants/" + url.PathEscape(tenant) }

// adminTenant is the tenant a per-tenant admin request names, when p may
// do perm on it; anything else answers like an unknown tenant, as does
// every tenant on a server configured without a token store.
func (ad *admin) adminTenant(c echo.Context, perm auth.Permission) (*auth.Principal, string, error) {
	p := auth.FromContext(c.Request().Context())
	t := c.Param("tenant")
	if !ledger.ValidTenant(t) || !p.Can(perm, t, "") {
		return p, "", notFound()
	}
	return p, t, nil
}

func (ad *admin) adminTenantPage(c echo.Context) error {
	p, tenant, err := ad.adminTenant(c, auth.ManageTokens)
	if err != nil {
		return err
	}
	v, err := ad.adminTenantView(c, p, tenant)
	if err != nil {
		return err
	}
	return ad.render(c, http.StatusOK, views.AdminTenant(v))
}

// adminTenantView builds one tenant's admin page: tokens (ids only),
// the callback endpoint (never its secret), the request parameters
// (read-only: they are set with settle tenant set) and the recent admin
// actions.
func (ad *admin) adminTenantView(c echo.Context, p *auth.Principal, tenant string) (views.AdminTenantPage, error) {
	ctx, now := c.Request().Context(), ad.clock(c)
	base := adminTenantHref(tenant)
	v := views.AdminTenantPage{Tenant: tenant, CreateToken: base + "/tokens", Back: "/admin",
		Callbacks:   p.Can(auth.ManageHooks, tenant, ""),
		SetCallback: base + "/callback", RemoveCallback: base + "/callback/remove",
		RetryCallbacks: base + "/callback/retry", TestCallback: base + "/callback/test"}
	known, err := ad.store.TenantKnown(ctx, tenant)
	if err != nil {
		return v, err
	}
	if !known {
		v.CreateToken = ""
		v.Unknown = ledger.ErrorMessage(ledger.UnknownTenant(tenant))
	}
	tokens, err := ad.store.ListTokens(ctx, tenant)
	if err != nil {
		return v, err
	}
	for _, t := range tokens {
		row := views.TokenRow{ID: t.ID, Name: ledger.PlainText(t.Name, 4*ledger.MaxTokenName),
			Created: timeView(&t.CreatedAt, now, ""), LastUsed: timeView(t.LastUsedAt, now, "never"),
			Revoked: timeView(t.RevokedAt, now, "active"), Rate: t.Rate.String(), Active: t.RevokedAt == nil}
		if row.Active {
			row.Revoke = base + "/tokens/" + url.PathEscape(t.ID) + "/revoke"
		}
		v.Tokens = append(v.Tokens, row)
	}
	if v.Callbacks {
		cb, err := ad.store.GetCallback(ctx, tenant)
		switch ledger.ErrorCode(err) {
		case "":
			v.Callback = &views.CallbackView{URL: ledger.PlainText(cb.URL, 2048), Updated: timeView(&cb.UpdatedAt, now, "")}
			g, err := ad.store.GivenUpNotifications(ctx, tenant, givenUpShown)
			if err != nil {
				return v, err
			}
			v.Callback.GivenUp = g.Count
			d, err := ad.store.CallbackDelivery(ctx, tenant)
			if err != nil && ledger.ErrorCode(err) != ledger.ENotFound { // removed meanwhile: no status
				return v, err
			}
			v.Callback.Delivery = deliveryView(d, now)
			for _, n := range g.Latest {
				v.Callback.GivenUpRows = append(v.Callback.GivenUpRows, views.GivenUpRow{OperationID: n.OperationID,
					State: string(n.State), Attempts: n.Attempts, LastStatus: n.LastStatus,
					LastError: ledger.PlainText(n.LastError, ledger.MaxCallbackError), At: timeView(n.GaveUpAt, now, "")})
			}
		case ledger.ENotFound:
		default:
			return v, err
		}
	}
	ps, err := ad.store.ListTenantParams(ctx, tenant)
	if err != nil {
		return v, err
	}
	v.ShowParams = true
	for _, p := range ps {
		v.Params = append(v.Params, views.ParamRow{Name: p.Name, Value: ledger.PlainText(p.Value, 4*ledger.MaxTenantParamValue),
			Updated: timeView(&p.UpdatedAt, now, "")})
	}
	acts, err := ad.store.Actions(ctx, ledger.ActionFilter{Tenant: tenant})
	if err != nil {
		return v, err
	}
	v.Actions = adminActions(acts, now)
	v.Layout = ad.layout(c, "Admin · "+tenant, "admin")
	v.ServedIn = servedIn(c)
	return v, nil
}

// adminActionWords names the actions this page shows.
var adminActionWords = map[ledger.ActionKind]string{
	ledger.ActionTenantCreate:          "created the tenant",
	ledger.ActionTokenCreate:           "created API token",
	ledger.ActionTokenRevoke:           "revoked API token",
	ledger.ActionCallbackSet:           "set the callback endpoint",
	ledger.ActionCallbackRemove:        "removed the callback endpoint",
	ledger.ActionCallbackRetry:         "sent the given-up callback notifications again",
	ledger.ActionEscalationNoticeRetry: "sent the given-up escalation notices again",
	// The object is the parameter's name; its value is never recorded.
	ledger.ActionTenantParamSet:   "set request parameter",
	ledger.ActionTenantParamUnset: "removed request parameter",
}

// maxAdminActions bounds the page's list of recent actions.
const maxAdminActions = 20

func adminActions(acts []ledger.Action, now time.Time) []views.ActionRow {
	var rows []views.ActionRow
	for _, a := range acts {
		what, ok := adminActionWords[a.Kind]
		if !ok {
			continue
		}
		who := ledger.PlainText(a.Subject, 300)
		if a.Name != "" {
			who = ledger.PlainText(a.Name, 200) + " (" + who + ")"
		}
		object := ledger.PlainText(a.Object, 100)
		if (a.Kind == ledger.ActionCallbackSet || a.Kind == ledger.ActionCallbackRemove) && a.Reason != "" {
			// The endpoint's URL (without its query), which the store records.
			object = ledger.PlainText(a.Reason, 600)
		}
		rows = append(rows, views.ActionRow{When: timeView(&a.At, now, ""), Who: who,
			Role: ledger.PlainText(a.Role, 40), What: what, Object: object,
			RequestID: ledger.PlainText(a.RequestID, 200)})
		if len(rows) == maxAdminActions {
			break
		}
	}
	return rows
}

// createToken issues an API token and shows its secret on this response
// only: it is never stored, never in a URL, and the page is not cached.
// A missing name or a tenant settle does not know re-renders the tenant's
// page with the reason beside the field and the name kept (422).
func (ad *admin) createToken(c echo.Context) error {
	p, tenant, err := ad.adminTenant(c, auth.ManageTokens)
	if err != nil {
		return err
	}
	name := strings.TrimSpace(c.FormValue("name"))
	secret, t, err := ledger.NewToken(tenant, name, ad.now())
	if err == nil {
		err = ad.store.CreateToken(actingAs(c, p, auth.ManageTokens, tenant, ""), t)
	}
	if ledger.ErrorCode(err) == ledger.EInvalid {
		v, verr := ad.adminTenantView(c, p, tenant)
		if verr != nil {
			return verr
		}
		v.TokenName, v.NameProblem = c.FormValue("name"), ledger.ErrorMessage(err)
		if v.Unknown != "" {
			v.NameProblem = ""
			v.Problem = v.Unknown
		}
		return ad.render(c, http.StatusUnprocessableEntity, views.AdminTenant(v))
	}
	if err != nil {
		return err
	}
	ad.log.Info("token created", "tenant", tenant, "token_id", t.ID,
		"request_id", c.Response().Header().Get(echo.HeaderXRequestID))
	v := views.SecretPage{Heading: "New API token “" + ledger.PlainText(t.Name, 4*ledger.MaxTokenName) + "”",
		Tenant: tenant, Label: "API token", ID: t.ID, Secret: secret,
		Note: "Copy it now: settle keeps only its hash and will never show it again. A client service sends it as “Authorization: Bearer …”.",
		Back: adminTenantHref(tenant)}
	v.Layout = ad.layout(c, "New API token", "admin")
	v.ServedIn = servedIn(c)
	return ad.render(c, http.StatusOK, views.Secret(v))
}

// revokeToken revokes one of the tenant's tokens, confirmed on the page
// confirmRevoke shows. Another tenant's token answers like an unknown one.
func (ad *admin) revokeToken(c echo.Context) error {
	p, tenant, err := ad.adminTenant(c, auth.ManageTokens)
	if err != nil {
		return err
	}
	err = ad.tokens.RevokeToken(actingAs(c, p, auth.ManageTokens, tenant, ""), tenant, c.Param("id"), ad.now())
	if ledger.ErrorCode(err) == ledger.ENotFound {
		return notFound()
	}
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, adminTenantHref(tenant))
}

// setCallback sets the tenant's endpoint with a fresh signing secret,
// shown on this response only.
func (ad *admin) setCallback(c echo.Context) error {
	p, tenant, err := ad.adminTenant(c, auth.ManageHooks)
	if err != nil {
		return err
	}
	raw := c.FormValue("url")
	if err := ad.callbackPolicy.CheckURL(raw); err != nil {
		v, verr := ad.adminTenantView(c, p, tenant)
		if verr != nil {
			return verr
		}
		v.Problem, v.CallbackURL = ledger.ErrorMessage(err), kept(raw, 2048)
		v.CallbackProblem = v.Problem
		return ad.render(c, http.StatusUnprocessableEntity, views.AdminTenant(v))
	}
	secret, err := ledger.NewCallbackSecret()
	if err != nil {
		return err
	}
	if err := ad.store.SetCallback(actingAs(c, p, auth.ManageHooks, tenant, ""), tenant, raw, []byte(secret), ad.now()); err != nil {
		return err
	}
	v := views.SecretPage{Heading: "Callback endpoint set", Tenant: tenant, Label: "Signing secret",
		ID: ledger.PlainText(raw, 2048), Secret: secret,
		Note: "Copy it now: it is shown only once. settle signs every notification with it (Settle-Signature: HMAC-SHA256 keyed with this text).",
		Back: adminTenantHref(tenant)}
	v.Layout = ad.layout(c, "Callback endpoint set", "admin")
	v.ServedIn = servedIn(c)
	return ad.render(c, http.StatusOK, views.Secret(v))
}

// removeCallback removes the tenant's endpoint, confirmed on the page
// confirmRemoveCallback shows; its undelivered notifications are
// discarded by the store.
func (ad *admin) removeCallback(c echo.Context) error {
	p, tenant, err := ad.adminTenant(c, auth.ManageHooks)
	if err != nil {
		return err
	}
	err = ad.store.RemoveCallback(actingAs(c, p, auth.ManageHooks, tenant, ""), tenant)
	if ledger.ErrorCode(err) == ledger.ENotFound {
		return notFound()
	}
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, adminTenantHref(tenant))
}

// retryCallbacks makes the tenant's given-up notifications due again, each
// with its attempts counted afresh, as `settle callback retry` does; the
// store records the retry among the tenant's recent changes.
func (ad *admin) retryCallbacks(c echo.Context) error {
	p, tenant, err := ad.adminTenant(c, auth.ManageHooks)
	if err != nil {
		return err
	}
	n, err := ad.store.RetryGivenUp(actingAs(c, p, auth.ManageHooks, tenant, ""), tenant, ad.now())
	if err != nil {
		return err
	}
	ad.log.Info("given-up callbacks retried", "tenant", tenant, "notifications", n,
		"request_id", c.Response().Header().Get(echo.HeaderXRequestID))
	return c.Redirect(http.StatusSeeOther, adminTenantHref(tenant))
}

// deliveryView says how the tenant's endpoint has been answering.
func deliveryView(d ledger.CallbackDelivery, now time.Time) views.DeliveryView {
	v := views.DeliveryView{LastAttempt: timeView(d.LastAttemptAt, now, "not yet, since the endpoint was set"),
		LastSuccess: timeView(d.LastSuccessAt, now, "none yet, since the endpoint was set"),
		Failing:     d.LastAttemptAt != nil && d.LastError != ""}
	v.LastAnswer = d.LastAnswer()
	switch {
	case d.FailuresSinceSuccess == 0:
	case d.LastSuccessAt == nil:
		v.Failures = figPlural(d.FailuresSinceSuccess, "failed attempt") + " since the endpoint was set"
	default:
		v.Failures = figPlural(d.FailuresSinceSuccess, "failed attempt") + " since the last success"
	}
	v.Pending = "none"
	if d.Pending > 0 {
		v.Pending = countText(d.Pending, d.Pending >= ledger.MaxPendingCounted) + " waiting to be delivered"
	}
	return v
}

// testCallback sends the tenant's endpoint one signed test message now
// and shows the tenant's page with how it answered. Nothing is queued or
// recorded: a test changes nothing.
func (ad *admin) testCallback(c echo.Context) error {
	p, tenant, err := ad.adminTenant(c, auth.ManageHooks)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	cb, err := ad.store.GetCallback(ctx, tenant)
	if ledger.ErrorCode(err) == ledger.ENotFound {
		return notFound()
	}
	if err != nil {
		return err
	}
	r := deliver.Test(ctx, ad.callbackClient, ad.callbackPolicy, cb, ad.now())
	ad.log.Info("callback test delivery", "tenant", tenant, "status", r.Status, "ok", r.Err == nil,
		"request_id", c.Response().Header().Get(echo.HeaderXRequestID))
	v, err := ad.adminTenantView(c, p, tenant)
	if err != nil {
		return err
	}
	took := ledger.FigureDuration(r.Took)
	switch {
	case r.Err == nil:
		v.TestResult = "Test delivery: the endpoint answered " + strconv.Itoa(r.Status) + " in " + took + "; it accepts settle's signed messages."
	case r.Status != 0:
		v.TestProblem = "Test delivery: the endpoint answered " + strconv.Itoa(r.Status) + " in " + took +
			"; settle would retry a notification answered so. Check that it verifies Settle-Signature with the current secret."
	default:
		v.TestProblem = "Test delivery: no answer (" + ledger.PlainText(ledger.ErrorMessage(r.Err), ledger.MaxCallbackError) + ")."
	}
	return ad.render(c, http.StatusOK, views.AdminTenant(v))
}
