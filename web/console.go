package web

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"settle/auth"
	"settle/deliver"
	"settle/ledger"
	"settle/resolve"
	"settle/target"
	"settle/views"
)

// SignIn is the console's sign-in (package auth implements it): Register
// mounts its own pages (/login, /auth/callback, /logout, …) and
// Middleware puts the signed-in *auth.Principal into the request context
// (auth.NewContext), or nothing for an anonymous request.
type SignIn interface {
	Register(e *echo.Echo)
	Middleware() echo.MiddlewareFunc
}

// ConsoleRoute is one row of the console's route table: every console
// page declares the permission it needs, and the server checks it by name
// on every request before the handler runs. Tenant checks happen in the
// handlers, per record.
type ConsoleRoute struct {
	Method     string
	Path       string
	Permission auth.Permission // "" only for Public routes
	// Public routes (the static files) need no sign-in; every other route
	// needs a principal holding Permission for some tenant.
	Public bool
	// Tenanted routes name one tenant's record in the URL (:tenant): a
	// principal who may not see that tenant gets the same 404 as for an
	// unknown record.
	Tenanted bool
	handle   echo.HandlerFunc
}

// consoleTable is the console's one route table, each row pointing at its
// feature's handler. A route without a permission is refused at start-up,
// and the authorization matrix test fails for a route it has no case for.
func consoleTable(f features) []ConsoleRoute {
	return slices.Concat(f.operations.routes(), f.escalations.routes(), f.review.routes(), f.figures.routes(), f.targets.routes(), f.admin.routes())
}

// pages is what every console page shares: the clock, the log, and the
// read-only switch its layout shows.
type pages struct {
	now      func() time.Time
	log      *slog.Logger
	readOnly bool
	// awaits counts what awaits a person, for the nav; nil shows no
	// counts.
	awaits *awaiting
	// liveEvery is how often an open live page refreshes (livePaths).
	liveEvery time.Duration
}

// features are the console's handlers, one struct per feature holding
// only what it uses, each built here from the pages bundle and the
// configuration. A new page is its feature's handler, view model, templ
// file and one row in that feature's routes.
type features struct {
	operations  *operationPages
	escalations *escalations
	review      *review
	figures     *figures
	targets     *targetPages
	admin       *admin
}

func newFeatures(pg pages, cfg Config, tokens *ledger.TokenCache) features {
	var contracts resolve.Contracts
	if cfg.Contracts != nil {
		contracts = cfg.Contracts
	}
	client := cfg.Client
	if client == nil {
		client = target.NewClient(target.ClientOptions{})
	}
	return features{
		operations: &operationPages{pages: pg, store: cfg.Store, targets: cfg.Targets},
		escalations: &escalations{pages: pg, targets: cfg.Targets,
			resolve: resolve.New(cfg.Store, contracts, client, pg.now)},
		review: &review{pages: pg, store: cfg.Store, targets: cfg.Targets,
			quarantine: resolve.NewQuarantine(cfg.Store)},
		figures: &figures{pages: pg, store: cfg.Store},
		targets: &targetPages{pages: pg, contracts: cfg.Contracts, names: cfg.Targets, drills: cfg.Store,
			retention: cfg.Retention, maxDrillAge: cfg.MaxDrillAge},
		admin: &admin{pages: pg, store: cfg.Store, tokens: tokens, callbackPolicy: cfg.CallbackPolicy,
			callbackClient: deliver.Guarded(&http.Client{Timeout: callbackTestTimeout}, cfg.CallbackPolicy)},
	}
}

// ConsoleRoutes returns a copy of the console's route table, for tests and
// documentation.
func ConsoleRoutes() []ConsoleRoute {
	return consoleTable(newFeatures(pages{}, Config{}, nil))
}

// signInPaths are the auth package's own routes: they are public, and
// sign-in and sign-out stay possible in read-only mode.
var signInPaths = []string{"/login", "/login/demo", "/logout", "/auth/callback"}

func (s *server) routesConsole(e *echo.Echo, cfg Config) {
	s.signIn.Register(e)
	for _, r := range consoleTable(newFeatures(s.pages, cfg, s.tokens)) {
		if r.Permission == "" && !r.Public {
			panic(fmt.Sprintf("web: console route %s %s declares no permission", r.Method, r.Path))
		}
		if r.Public {
			e.Add(r.Method, r.Path, r.handle)
			continue
		}
		mw := []echo.MiddlewareFunc{s.signIn.Middleware(), s.authorize(r)}
		if r.Method == http.MethodGet && livePaths[r.Path] {
			mw = append(mw, live)
		}
		e.Add(r.Method, r.Path, r.handle, mw...)
	}
}

// startKey is where the console keeps the time a request arrived, for the
// server time shown on each page.
const startKey = "settle.start"

// authorize checks route r's permission on every request: anonymous
// browsers are sent to sign in (and brought back), a person with no role
// sees the no-role page, one without the permission a 403 page.
func (s *server) authorize(r ConsoleRoute) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			p := auth.FromContext(c.Request().Context())
			if p == nil {
				req := c.Request()
				if req.Method == http.MethodGet || req.Method == http.MethodHead {
					return c.Redirect(http.StatusSeeOther, "/login?return="+url.QueryEscape(req.URL.RequestURI()))
				}
				return &pageError{status: http.StatusUnauthorized, signIn: true,
					message: "Your session has ended. Sign in again, then repeat what you were doing."}
			}
			if len(p.Bindings) == 0 {
				return s.render(c, http.StatusForbidden, views.NoRole(s.layout(c, "No role", "")))
			}
			if !p.Has(r.Permission) {
				return &pageError{status: http.StatusForbidden,
					message: "Your role does not allow this page. Ask an administrator if you need it."}
			}
			return next(c)
		}
	}
}

// render writes a component as a complete HTML page. Console pages hold
// one person's view of tenant data: no cache keeps them.
func (pages) render(c echo.Context, status int, comp templ.Component) error {
	var buf bytes.Buffer
	if err := comp.Render(c.Request().Context(), &buf); err != nil {
		return fmt.Errorf("render: %w", err)
	}
	h := c.Response().Header()
	h.Set(echo.HeaderCacheControl, "no-store")
	if start, ok := c.Get(startKey).(time.Time); ok {
		h.Set("Server-Timing", "app;dur="+strconv.FormatInt(time.Since(start).Milliseconds(), 10))
	}
	return c.HTMLBlob(status, buf.Bytes())
}

// navigation lists the console's sections in the order the header shows
// them; a person sees the ones their roles permit.
var navigation = []struct {
	key, label, href string
	permission       auth.Permission
}{
	{"operations", "Operations", "/operations", auth.ViewOperations},
	{"escalations", "Escalations", "/escalations", auth.Resolve},
	{"quarantine", "Quarantine", "/quarantine", auth.ReviewInbox},
	{"findings", "Findings", "/findings", auth.ReviewInbox},
	{"figures", "Figures", "/figures", auth.ViewFigures},
	{"targets", "Targets", "/targets", auth.ViewOperations},
	{"admin", "Admin", "/admin", auth.ManageTokens},
}

// layout is what every page shares; current names the nav entry shown as
// the current page.
func (pg pages) layout(c echo.Context, title, current string) views.Layout {
	l := views.Layout{Title: title, CSRF: csrfToken(c), ReadOnly: pg.readOnly}
	p := auth.FromContext(c.Request().Context())
	if p == nil {
		return l
	}
	l.User = &views.User{Name: displayName(p), Roles: rolesText(p), Identity: identityText(p)}
	l.Zone = zoneOf(c).String()
	l.Live = pg.liveView(c)
	for _, n := range navigation {
		if p.Has(n.permission) {
			link := views.Link{Label: n.label, Href: n.href, Current: current == n.key}
			link.Count, link.CountText = pg.count(c, p, n.key)
			l.Nav = append(l.Nav, link)
		}
	}
	return l
}

// servedIn is the server time so far, for a page's footer.
func servedIn(c echo.Context) string {
	start, ok := c.Get(startKey).(time.Time)
	if !ok {
		return ""
	}
	return strconv.FormatInt(time.Since(start).Milliseconds(), 10) + " ms"
}

// stamp records when a console request arrived.
func stamp(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Set(startKey, time.Now())
		return next(c)
	}
}

func displayName(p *auth.Principal) string {
	switch {
	case p.Name != "":
		return p.Name
	case p.Email != "":
		return p.Email
	}
	return p.Subject
}

// identityText is p's e-mail and subject, for the header: a name alone
// does not tell an operator which subject to revoke.
func identityText(p *auth.Principal) string {
	if p.Email == "" {
		return p.Subject
	}
	return p.Email + " · " + p.Subject
}

// rolesText lists p's roles with the tenants each covers:
// "owner (acme, globex) · admin (all tenants)".
func rolesText(p *auth.Principal) string {
	parts := make([]string, 0, len(p.Bindings))
	for _, b := range p.Bindings {
		scope := "all tenants"
		if b.Tenants != nil {
			scope = strings.Join(b.Tenants, ", ")
		}
		parts = append(parts, string(b.Role)+" ("+scope+")")
	}
	return strings.Join(parts, " · ")
}

// tenantScope is the part of a filter that limits a query to the tenants
// p may read operations of.
func tenantScope(p *auth.Principal) (all bool, tenants []string) {
	return p.Tenants(auth.ViewOperations)
}

// isConsolePath reports whether a path belongs to the console (HTML
// pages), not to the API, the webhooks or the operational endpoints.
func isConsolePath(p string) bool {
	for _, prefix := range []string{"/api/", "/webhooks/"} {
		if strings.HasPrefix(p, prefix) {
			return false
		}
	}
	switch p {
	case "/healthz", "/readyz", "/metrics", "/api", "/webhooks":
		return false
	}
	return true
}

// actingAs returns the request's context carrying p as the actor of a
// console change: the stable subject, the display name, the role that
// permits perm on the tenant's records of target ("" when the change is
// not about one target), and this response's request id, so that the
// event log and the server's log meet.
func actingAs(c echo.Context, p *auth.Principal, perm auth.Permission, tenant, target string) context.Context {
	return ledger.NewContextWithActor(c.Request().Context(), ledger.Actor{
		Subject: p.Subject, Name: displayName(p), Role: string(p.RoleFor(perm, tenant, target)),
		RequestID: c.Response().Header().Get(echo.HeaderXRequestID),
	})
}
