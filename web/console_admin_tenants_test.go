package web_test

import (
	"bytes"
	"net/http"
	"net/url"
	"testing"

	"settle/ledger"
	"settle/web"
)

// A typo'd tenant gets no token: its page says settle does not know it and
// offers no form, and a POST is refused (422) with the same message and
// nothing stored. An administrator of every tenant creates one in two
// steps: the GET page confirms the name (changing nothing), the POST with
// CSRF creates it, recorded; an administrator of some tenants may not.
func TestConsoleAdmin_CreateTenant(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{})
		b := c.as("admin-all")
		page := b.get("/admin")
		if !testid(page.body, "admin-tenant", "acme") || !bytes.Contains(page.body, []byte(`data-testid="new-tenant"`)) {
			t.Fatalf("admin page: %s", page.body)
		}
		typo := b.get("/admin/tenants/acmee")
		if typo.status != http.StatusOK || !testid(typo.body, "tenant-unknown", "settle knows no tenant “acmee”") ||
			bytes.Contains(typo.body, []byte(`data-testid="token-create"`)) {
			t.Fatalf("typo's page: %d %s", typo.status, typo.body)
		}
		refused := b.do(http.MethodPost, "/admin/tenants/acmee/tokens", url.Values{"_csrf": {b.token()}, "name": {"billing"}})
		if refused.status != http.StatusUnprocessableEntity || !testid(refused.body, "admin-problem", "settle knows no tenant “acmee”") {
			t.Fatalf("token for a typo: %d %s", refused.status, refused.body)
		}
		if toks, _ := c.store.ListTokens(adminCtx, "acmee"); len(toks) != 0 {
			t.Fatalf("a token was stored for a typo: %+v", toks)
		}
		if r := b.get("/admin?tenant=acmee"); !testid(r.body, "admin-problem", "settle knows no tenant") {
			t.Fatalf("opening a typo: %s", r.body)
		}

		confirm := b.get("/admin/new-tenant?tenant=initech")
		if confirm.status != http.StatusOK || !testid(confirm.body, "confirm-tenant", "initech") ||
			!testid(confirm.body, "confirm-existing", "acme, globex") {
			t.Fatalf("confirm: %d %s", confirm.status, confirm.body)
		}
		if known, _ := c.store.TenantKnown(adminCtx, "initech"); known {
			t.Fatal("the confirmation page created the tenant")
		}
		if r := b.do(http.MethodPost, "/admin/tenants", url.Values{"tenant": {"initech"}}); r.status != http.StatusForbidden {
			t.Fatalf("create without CSRF: %d", r.status)
		}
		if r := c.as("admin").do(http.MethodPost, "/admin/tenants", url.Values{"_csrf": {c.as("admin").token()}, "tenant": {"initech"}}); r.status != http.StatusForbidden {
			t.Fatalf("an admin of acme only: %d", r.status)
		}
		created := b.do(http.MethodPost, "/admin/tenants", url.Values{"_csrf": {b.token()}, "tenant": {"initech"}})
		if created.status != http.StatusSeeOther || created.header.Get("Location") != "/admin/tenants/initech" {
			t.Fatalf("create: %d %v %s", created.status, created.header, created.body)
		}
		a := findAction(t, c.actions("initech"), ledger.ActionTenantCreate, "initech")
		if a.Subject != "demo:ada" || a.RequestID != created.header.Get("X-Request-Id") {
			t.Fatalf("recorded %+v", a)
		}
		for _, name := range []string{"initech", "Bad Name"} {
			if r := b.get("/admin/new-tenant?tenant=" + url.QueryEscape(name)); r.status != http.StatusUnprocessableEntity {
				t.Fatalf("confirm %q: %d", name, r.status)
			}
		}
		if r := b.do(http.MethodPost, "/admin/tenants/initech/tokens", url.Values{"_csrf": {b.token()}, "name": {"billing"}}); r.status != http.StatusOK {
			t.Fatalf("token for the new tenant: %d %s", r.status, r.body)
		}
	})
}
