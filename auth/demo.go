package auth

import (
	"crypto/rand"
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"

	"settle/ledger"
)

// DemoUser is one of the fixed people of `settle serve --demo`.
type DemoUser struct {
	ID          string // the subject is "demo:" + ID
	Name        string
	Email       string
	Description string   // what this user may do, for the chooser
	Claims      []string // their "groups", mapped by DemoBindings
}

// The demo's tenants and its simulated target.
const (
	DemoTenantA = "acme"
	DemoTenantB = "globex"
	DemoTarget  = "demo"
)

// DemoUsers returns the demo's people: every role, two owners of the demo
// target (so that the two-person rule can be tried), and a support user
// who sees only one tenant.
func DemoUsers() []DemoUser {
	return []DemoUser{
		{ID: "support", Name: "Sam Support", Email: "sam@demo.invalid", Claims: []string{"demo-support"},
			Description: "Support: reads operations of acme and globex"},
		{ID: "support-acme", Name: "Alex Acme-Support", Email: "alex@demo.invalid", Claims: []string{"demo-support-acme"},
			Description: "Support: reads operations of acme only"},
		{ID: "owner-ada", Name: "Ada Owner", Email: "ada@demo.invalid", Claims: []string{"demo-owners"},
			Description: "Owner of the demo targets: proposes and approves resolutions"},
		{ID: "owner-grace", Name: "Grace Owner", Email: "grace@demo.invalid", Claims: []string{"demo-owners"},
			Description: "Owner of the demo targets: approves Ada's proposals (nobody approves their own)"},
		{ID: "manager", Name: "Morgan Manager", Email: "morgan@demo.invalid", Claims: []string{"demo-managers"},
			Description: "Manager: reads the figures of acme and globex"},
		{ID: "admin", Name: "Avery Admin", Email: "avery@demo.invalid", Claims: []string{"demo-admins"},
			Description: "Admin: API tokens, callbacks and settings of every tenant"},
	}
}

// DemoBindings maps the demo users' claims to roles, as a real config maps
// a provider's groups.
func DemoBindings() []BindingRule {
	both := []string{DemoTenantA, DemoTenantB}
	return []BindingRule{
		{Group: "demo-support", Role: Support, Tenants: both},
		{Group: "demo-support-acme", Role: Support, Tenants: []string{DemoTenantA}},
		{Group: "demo-owners", Role: Owner, Tenants: both, Targets: DemoTargets()},
		{Group: "demo-managers", Role: Manager, Tenants: both},
		{Group: "demo-admins", Role: Admin},
	}
}

// DemoTargets are the playground's simulated targets, which cmd/settle
// starts with --demo and the demo owners own.
func DemoTargets() []string { return []string{DemoTarget, "transfers", "legacy-billing"} }

// NewDemoConsole returns the console of `settle serve --demo`: GET /login
// offers the demo users, POST /login/demo signs one in (subject
// "demo:<id>"), with the same sessions as OIDC. The session key is made
// at random now, so a restart signs everyone out. It is refused unless
// WithListenAddr names a loopback address: anyone who can reach it can be
// anyone.
func NewDemoConsole(ss ledger.SessionStore, opts ...Option) (*Console, error) {
	var o options
	for _, f := range opts {
		f(&o)
	}
	if o.listen == "" {
		return nil, ledger.Errorf(ledger.EInvalid, "the demo sign-in needs the listen address, which must be loopback")
	}
	if err := CheckLoopback(o.listen); err != nil {
		return nil, err
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	c, err := newConsole(ss, key, SessionConfig{Absolute: DefaultAbsolute, Idle: DefaultIdle}, DemoBindings(), o)
	if err != nil {
		return nil, err
	}
	c.demo = DemoUsers()
	return c, nil
}

// demoLogin signs in the chosen demo user.
func (c *Console) demoLogin(ec echo.Context) error {
	ret := SafeReturn(ec.FormValue("return"))
	i := slices.IndexFunc(c.demo, func(u DemoUser) bool { return u.ID == ec.FormValue("user") })
	if i < 0 {
		return c.render(ec, http.StatusBadRequest, SignInView{Demo: true, Users: c.demo, Return: ret,
			Error: "Choose one of the demo users.", CSRF: csrfOf(ec)})
	}
	u := c.demo[i]
	return c.signIn(ec, "demo:"+u.ID, u.Name, u.Email, u.Claims, ret)
}
