package auth

import (
	"context"
	"crypto/rand"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"settle/ledger"
)

// Console routes this package serves.
const (
	LoginPath     = "/login"
	CallbackPath  = "/auth/callback"
	LogoutPath    = "/logout"
	DemoLoginPath = "/login/demo"
)

// SignInView is what the sign-in pages show; the web package renders it
// with its templates.
type SignInView struct {
	Demo      bool       // the demo chooser: pick one of Users
	Users     []DemoUser // demo users, in Demo mode
	Return    string     // the safe path to go to after sign-in
	LoginURL  string     // where "Sign in" goes (OIDC mode)
	Error     string     // plain-language problem, e.g. "signed in but no role"
	NoRole    bool       // signed in at the provider, but no binding matches (status 403)
	SignedOut bool       // shown after sign-out
	// Unavailable: the OpenID provider has not been reached (status 503);
	// Error says so.
	Unavailable bool
	CSRF        string // value for the forms' _csrf field
}

// RenderFunc renders a sign-in page with status.
type RenderFunc func(c echo.Context, status int, v SignInView) error

// Option adjusts a Console.
type Option func(*options)

type options struct {
	render   RenderFunc
	now      func() time.Time
	log      *slog.Logger
	client   *http.Client
	listen   string
	insecure bool

	retryInitial, retryMax time.Duration
}

// WithRender sets the page renderer (default: minimal plain HTML).
func WithRender(r RenderFunc) Option { return func(o *options) { o.render = r } }

// WithClock sets the clock session times come from; it must be the clock
// the session store decides expiry by. ID tokens are checked against the
// real time, as the provider issues them.
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// WithHTTPClient sets the client used to talk to the OpenID provider.
func WithHTTPClient(c *http.Client) Option { return func(o *options) { o.client = c } }

// WithDiscoveryRetry sets the backoff of the provider's discovery while
// it cannot be reached: the first wait and the longest (default 1 s and
// 1 min).
func WithDiscoveryRetry(initial, max time.Duration) Option {
	return func(o *options) { o.retryInitial, o.retryMax = initial, max }
}

// WithListenAddr tells the console the address `settle serve` binds; it
// is needed to relax the Secure cookie flag, which is allowed only on
// loopback.
func WithListenAddr(addr string) Option { return func(o *options) { o.listen = addr } }

// WithInsecureCookie drops the session cookie's Secure flag, for plain
// http on loopback. The console refuses it unless WithListenAddr names a
// loopback address.
func WithInsecureCookie() Option { return func(o *options) { o.insecure = true } }

// Console is the console's sign-in: the routes that sign people in and
// out, and the middleware that turns a session cookie into a Principal.
type Console struct {
	store  *DBStore
	rules  atomic.Pointer[[]BindingRule]
	oidc   atomic.Pointer[oidcFlow] // nil in demo mode, and until discovery succeeds
	disc   *discovery               // nil in demo mode
	client *http.Client             // to the OpenID provider
	demo   []DemoUser               // nil in OIDC mode
	render RenderFunc
	log    *slog.Logger
}

func newConsole(ss ledger.SessionStore, key []byte, sc SessionConfig, rules []BindingRule, o options) (*Console, error) {
	if o.insecure || sc.InsecureCookie {
		if o.listen == "" {
			return nil, ledger.Errorf(ledger.EInvalid, "an insecure (non-Secure) session cookie needs the listen address, which must be loopback")
		}
		if err := CheckLoopback(o.listen); err != nil {
			return nil, fmt.Errorf("insecure session cookie: %w", err)
		}
	}
	if o.now == nil {
		o.now = time.Now
	}
	if o.log == nil {
		o.log = slog.Default()
	}
	if o.render == nil {
		o.render = renderPlain
	}
	store, err := NewDBStore(ss, key, sc.Absolute, sc.Idle, !(o.insecure || sc.InsecureCookie), o.now)
	if err != nil {
		return nil, err
	}
	if o.client == nil {
		o.client = defaultClient()
	}
	c := &Console{store: store, render: o.render, client: o.client, log: o.log.With("component", "console-auth")}
	c.SetBindings(rules)
	return c, nil
}

// SetBindings replaces the binding rules. Roles are resolved from the
// sessions' stored claims at every request, so this applies at once,
// without anyone signing in again.
func (c *Console) SetBindings(rules []BindingRule) { c.rules.Store(&rules) }

// Sessions returns the console's gorilla session store.
func (c *Console) Sessions() *DBStore { return c.store }

// Register adds the sign-in routes to e: GET /login, GET /auth/callback
// (OIDC), POST /login/demo (demo), POST /logout. The web package's CSRF
// middleware, which wraps every console request, guards the POST routes.
func (c *Console) Register(e *echo.Echo) {
	e.GET(LoginPath, c.login)
	e.POST(LogoutPath, c.logout)
	if c.disc != nil {
		e.GET(CallbackPath, c.callback)
	}
	if c.demo != nil {
		e.POST(DemoLoginPath, c.demoLogin)
	}
}

// Middleware loads the request's session and puts its *Principal into the
// request context (NewContext), with bindings resolved from the session's
// claims now: someone whose claims no longer match a binding carries a
// Principal without bindings, who may do nothing. Without a live session
// the context carries none: each route decides whether that is a redirect
// to /login or a 401.
func (c *Console) Middleware() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(ec echo.Context) error {
			p, err := c.Principal(ec.Request())
			if err != nil {
				return err
			}
			if p != nil {
				r := ec.Request()
				ec.SetRequest(r.WithContext(NewContext(r.Context(), p)))
			}
			return next(ec)
		}
	}
}

// Principal returns the signed-in principal of r, or nil when r has no
// live session. Only a database failure is an error.
func (c *Console) Principal(r *http.Request) (*Principal, error) {
	sess, err := c.store.Get(r, SessionCookie)
	if err != nil {
		return nil, err
	}
	if sess.IsNew {
		return nil, nil
	}
	subject, _ := sess.Values[ValueSubject].(string)
	name, _ := sess.Values[ValueName].(string)
	email, _ := sess.Values[ValueEmail].(string)
	claims, _ := sess.Values[ValueClaims].([]string)
	return &Principal{Subject: subject, Name: name, Email: email, Bindings: BindingsFor(*c.rules.Load(), claims)}, nil
}

// RevokeSubject ends every session of subject at once.
func (c *Console) RevokeSubject(ctx context.Context, subject string) (int, error) {
	return c.store.sessions.RevokeSessions(ctx, subject)
}

// DeleteExpired removes expired session rows; run it now and then.
func (c *Console) DeleteExpired(ctx context.Context) (int, error) {
	return c.store.sessions.DeleteExpiredSessions(ctx)
}

// signIn ends any session the request holds, starts a fresh one for the
// identity and redirects to ret. An identity whose claims grant no role
// gets the 403 "no role" page and no session.
func (c *Console) signIn(ec echo.Context, subject, name, email string, claims []string, ret string) error {
	// The one normalisation of a person's subject, shared with the CLI's
	// --as, so the two-person rule sees one person however it was typed.
	subject = ledger.NormalizeSubject(subject)
	if len(BindingsFor(*c.rules.Load(), claims)) == 0 {
		c.log.Info("sign-in refused: no role", "subject", subject, "request_id", requestID(ec))
		return c.render(ec, http.StatusForbidden, SignInView{NoRole: true, Return: ret,
			Error: "You are signed in at your identity provider, but settle gives you no role. Ask an administrator to bind one of your groups to a role."})
	}
	r, w := ec.Request(), ec.Response()
	if old, err := c.store.New(r, SessionCookie); err == nil && !old.IsNew {
		if err := c.store.sessions.DeleteSession(r.Context(), hashID(old.ID)); err != nil {
			return fmt.Errorf("sign in: %w", err)
		}
	}
	sess := c.store.Fresh(SessionCookie)
	sess.Values[ValueSubject] = subject
	sess.Values[ValueName] = name
	sess.Values[ValueEmail] = email
	sess.Values[ValueClaims] = claims
	if err := c.store.Save(r, w, sess); err != nil {
		return err
	}
	c.log.Info("signed in", "subject", subject, "request_id", requestID(ec))
	return ec.Redirect(http.StatusSeeOther, ret)
}

// logout deletes the session's row and clears the cookie.
func (c *Console) logout(ec echo.Context) error {
	r := ec.Request()
	sess, err := c.store.New(r, SessionCookie)
	if err != nil {
		return err
	}
	sess.Options.MaxAge = -1
	if err := c.store.Save(r, ec.Response(), sess); err != nil {
		return err
	}
	return ec.Redirect(http.StatusSeeOther, LoginPath+"?signed_out=1")
}

// login shows the demo chooser, or (OIDC) starts the provider's sign-in.
func (c *Console) login(ec echo.Context) error {
	ret := SafeReturn(ec.QueryParam("return"))
	if c.demo != nil {
		return c.render(ec, http.StatusOK, SignInView{Demo: true, Users: c.demo, Return: ret,
			SignedOut: ec.QueryParam("signed_out") != "", CSRF: csrfOf(ec)})
	}
	if ec.QueryParam("signed_out") != "" {
		// Going straight back to the provider would sign the person in
		// again at once; let them choose.
		return c.render(ec, http.StatusOK, SignInView{SignedOut: true, Return: "/", LoginURL: LoginPath})
	}
	f := c.oidc.Load()
	if f == nil {
		return c.unavailable(ec)
	}
	return f.start(ec, ret)
}

// unavailable answers a sign-in while the provider has not been reached:
// 503, and a page that says so. The outage is logged once, by Discover,
// not once per person trying.
func (c *Console) unavailable(ec echo.Context) error {
	return c.render(ec, http.StatusServiceUnavailable, SignInView{Unavailable: true, Return: "/",
		Error: "Sign-in is unavailable: settle cannot reach your organisation's identity provider. " +
			"Operations, the API and the sends are not affected. Try again in a few minutes."})
}

func csrfOf(ec echo.Context) string {
	s, _ := ec.Get("csrf").(string)
	return s
}

// SafeReturn returns p when it is a same-origin absolute path ("/x"), and
// "/" otherwise: never "//host", "/\host", a scheme, or control characters,
// which browsers would take to another site; nor the sign-in routes
// themselves, which would only start another sign-in.
func SafeReturn(p string) string {
	if p == "" || p[0] != '/' || len(p) > 2000 || strings.HasPrefix(p, "//") || strings.ContainsAny(p, "\\") {
		return "/"
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return "/"
		}
	}
	u, err := url.Parse(p)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || !strings.HasPrefix(u.Path, "/") ||
		strings.HasPrefix(u.Path, "//") {
		return "/"
	}
	switch u.Path {
	case LoginPath, CallbackPath, LogoutPath, DemoLoginPath:
		return "/"
	}
	return p
}

func randomToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return fmt.Sprintf("%x", b), nil
}

var plainPage = template.Must(template.New("signin").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign in — settle</title></head><body><main>
<h1>Sign in to settle</h1>
{{if .Error}}<p role="alert" data-testid="signin-error">{{.Error}}</p>{{end}}
{{if .SignedOut}}<p data-testid="signed-out">You have signed out.</p>{{end}}
{{if .Demo}}<form method="post" action="/login/demo">
<input type="hidden" name="_csrf" value="{{.CSRF}}"><input type="hidden" name="return" value="{{.Return}}">
<fieldset><legend>Demo users</legend>
{{range .Users}}<p><button type="submit" name="user" value="{{.ID}}" data-testid="demo-{{.ID}}">{{.Name}}</button> {{.Description}}</p>
{{end}}</fieldset></form>
{{else if .LoginURL}}<p><a href="{{.LoginURL}}?return={{.Return}}">Sign in</a></p>{{end}}
</main></body></html>`))

// renderPlain is the default renderer: minimal HTML, for tests and for a
// console without the web package's templates.
func renderPlain(ec echo.Context, status int, v SignInView) error {
	var b strings.Builder
	if err := plainPage.Execute(&b, v); err != nil {
		return err
	}
	return ec.HTML(status, b.String())
}

// LoginURL is where a route sends someone who is not signed in, so that
// they come back to ret (a path of this site) afterwards.
func LoginURL(ret string) string { return LoginPath + "?return=" + url.QueryEscape(SafeReturn(ret)) }

// requestID is the id the web server gave the request (X-Request-Id), so
// that a sign-in's log line ties to the request's.
func requestID(ec echo.Context) string { return ec.Response().Header().Get(echo.HeaderXRequestID) }
