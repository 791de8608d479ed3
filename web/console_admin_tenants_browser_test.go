package web_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"settle/auth/oidctest"
	"settle/ledger/storetest"
	"settle/web"
)

// An administrator of every tenant, in headless Chromium through a real
// OpenID provider, picks a tenant from the list, sees a misspelt one
// refused, and creates a new tenant through its confirmation page, then
// its first named token. Every page passes axe and is a screenshot.
func TestConsoleAdmin_BrowserTenants(t *testing.T) {
	t.Parallel()
	s := storetest.Postgres().New(t, time.Now).(store)
	c, prov := oidcConsole(t, s, web.Config{Contracts: testContracts(t)}, `  - group: admin-all
    role: admin
    tenants: all
`,
		oidctest.User{Subject: "ada-1", Name: "Ada Admin", Email: "ada@example.test", Groups: []string{"admin-all"}})
	b, check := visit(t)
	prov.SignInAs(t, "ada-1")
	if st := b.Navigate(c.base + "/admin"); st != http.StatusOK {
		t.Fatalf("admin: %d", st)
	}
	if n := b.Count(`[data-testid="admin-tenant"]`); n != 2 {
		t.Fatalf("%d tenants listed, want acme and globex", n)
	}
	check("admin-tenants")
	if st := b.Navigate(c.base + "/admin/tenants/acmee"); st != http.StatusOK {
		t.Fatalf("typo: %d", st)
	}
	if got := b.TextByTestID("tenant-unknown"); !strings.Contains(got, "settle knows no tenant “acmee”") ||
		b.Count(`[data-testid="token-create"]`) != 0 {
		t.Fatalf("the typo's page reads %q", got)
	}
	check("tenant-unknown")
	if st := b.Navigate(c.base + "/admin"); st != http.StatusOK {
		t.Fatalf("admin: %d", st)
	}
	b.Fill(`[data-testid="new-tenant-input"]`, "initech")
	if st := b.Submit(`[data-testid="new-tenant"]`); st != http.StatusOK {
		t.Fatalf("new tenant: %d", st)
	}
	if got := b.TextByTestID("confirm-existing"); got != "acme, globex" {
		t.Fatalf("the confirmation lists %q", got)
	}
	check("tenant-confirm")
	if st := b.Submit(`[data-testid="confirm-create-tenant"]`); st != http.StatusOK {
		t.Fatalf("create: %d", st)
	}
	if got := b.TextByTestID("admin-tenant-name"); got != "initech" {
		t.Fatalf("opened %q", got)
	}
	b.Fill(`[data-testid="token-name-input"]`, "initech billing")
	if st := b.Submit(`[data-testid="token-create"]`); st != http.StatusOK {
		t.Fatalf("create token: %d", st)
	}
	if got := b.TextByTestID("secret"); !strings.HasPrefix(got, "stl_") {
		t.Fatalf("secret %q", got)
	}
	check("tenant-first-token")
}
