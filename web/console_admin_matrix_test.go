package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"settle/ledger"
	"settle/target"
)

// adminCases are the authorization matrix's cases for these routes.
var adminCases = map[string]matrixCase{
	"GET /targets":       {url: func(*console, ledger.Operation) string { return "/targets" }, ok: http.StatusOK},
	"GET /targets/:name": {url: func(*console, ledger.Operation) string { return "/targets/payments" }, ok: http.StatusOK},
	"GET /admin":         {url: func(*console, ledger.Operation) string { return "/admin" }, ok: http.StatusOK},
	"GET /admin/tenants/:tenant": {url: func(_ *console, op ledger.Operation) string { return "/admin/tenants/" + op.Tenant },
		ok: http.StatusOK},
	// Creating answers 200 with the secret itself: a redirect would have
	// to carry the secret somewhere.
	// Only an administrator of every tenant creates one; the matrix's
	// admin is bound to acme, so its answer is the handler's 403
	// (TestConsoleAdmin_CreateTenant has the administrator of all).
	"GET /admin/new-tenant": {url: func(*console, ledger.Operation) string { return "/admin/new-tenant?tenant=initech" },
		ok: http.StatusForbidden},
	"POST /admin/tenants": {url: func(*console, ledger.Operation) string { return "/admin/tenants" },
		ok: http.StatusForbidden, form: func(*console, ledger.Operation) url.Values {
			return url.Values{"tenant": {"initech"}}
		}},
	"POST /admin/tenants/:tenant/tokens": {url: func(_ *console, op ledger.Operation) string {
		return "/admin/tenants/" + op.Tenant + "/tokens"
	}, ok: http.StatusOK, form: func(*console, ledger.Operation) url.Values {
		return url.Values{"name": {"billing"}}
	}},
	"GET /admin/tenants/:tenant/tokens/:id/revoke": {url: func(c *console, op ledger.Operation) string {
		return "/admin/tenants/" + op.Tenant + "/tokens/" + c.issueToken(op.Tenant).ID + "/revoke"
	}, ok: http.StatusOK},
	"POST /admin/tenants/:tenant/tokens/:id/revoke": {url: func(c *console, op ledger.Operation) string {
		return "/admin/tenants/" + op.Tenant + "/tokens/" + c.issueToken(op.Tenant).ID + "/revoke"
	}, ok: http.StatusSeeOther, form: emptyForm},
	"POST /admin/tenants/:tenant/callback": {url: func(_ *console, op ledger.Operation) string {
		return "/admin/tenants/" + op.Tenant + "/callback"
	}, ok: http.StatusOK, form: func(*console, ledger.Operation) url.Values {
		return url.Values{"url": {"https://hooks.example.com/settle"}}
	}},
	"GET /admin/tenants/:tenant/callback/remove": {url: func(c *console, op ledger.Operation) string {
		c.setCallback(op.Tenant)
		return "/admin/tenants/" + op.Tenant + "/callback/remove"
	}, ok: http.StatusOK},
	"POST /admin/tenants/:tenant/callback/remove": {url: func(c *console, op ledger.Operation) string {
		c.setCallback(op.Tenant)
		return "/admin/tenants/" + op.Tenant + "/callback/remove"
	}, ok: http.StatusSeeOther, form: emptyForm},
	// The endpoint is on loopback, which the production policy refuses:
	// the test delivery is reported as refused (200), with nothing sent.
	"POST /admin/tenants/:tenant/callback/test": {url: func(c *console, op ledger.Operation) string {
		if err := c.callbacks().SetCallback(adminCtx, op.Tenant, "https://127.0.0.1:9/cb", []byte(strings.Repeat("s", 32)), time.Now()); err != nil {
			c.t.Fatal(err)
		}
		return "/admin/tenants/" + op.Tenant + "/callback/test"
	}, ok: http.StatusOK, form: emptyForm},
	"POST /admin/tenants/:tenant/callback/retry": {url: func(c *console, op ledger.Operation) string {
		return "/admin/tenants/" + op.Tenant + "/callback/retry"
	}, ok: http.StatusSeeOther, form: emptyForm},
}

func emptyForm(*console, ledger.Operation) url.Values { return url.Values{} }

// testContracts are the full example contracts of package target:
// payments sets every field, provisioning only the required ones.
func testContracts(t *testing.T) *target.Set {
	t.Helper()
	set, err := target.Load("../target/testdata/contracts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// issueToken stores a new token of tenant the way the CLI does.
func (c *console) issueToken(tenant string) ledger.Token {
	c.t.Helper()
	knownTenants(c.t, c.store, tenant)
	_, tok, err := ledger.NewToken(tenant, "test client", time.Now())
	if err != nil {
		c.t.Fatal(err)
	}
	if err := c.store.CreateToken(adminCtx, tok); err != nil {
		c.t.Fatal(err)
	}
	return tok
}

func (c *console) callbacks() ledger.CallbackStore {
	c.t.Helper()
	cs, ok := c.store.(ledger.CallbackStore)
	if !ok {
		c.t.Fatal("the store keeps no callbacks")
	}
	return cs
}

func (c *console) actions(tenant string) []ledger.Action {
	c.t.Helper()
	as, ok := c.store.(ledger.ActionStore)
	if !ok {
		c.t.Fatal("the store keeps no actions")
	}
	acts, err := as.Actions(context.Background(), ledger.ActionFilter{Tenant: tenant})
	if err != nil {
		c.t.Fatal(err)
	}
	return acts
}

// setCallback gives tenant an endpoint the way the CLI does.
func (c *console) setCallback(tenant string) {
	c.t.Helper()
	secret, err := ledger.NewCallbackSecret()
	if err != nil {
		c.t.Fatal(err)
	}
	if err := c.callbacks().SetCallback(adminCtx, tenant, "https://hooks.example.com/cli", []byte(secret), time.Now()); err != nil {
		c.t.Fatal(err)
	}
}
