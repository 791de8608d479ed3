package web_test

import (
	"net/http"
	"testing"
	"time"

	"settle/auth/oidctest"
	"settle/ledger/storetest"
	"settle/web"
)

// TestConsole_DarkScheme: a person whose system prefers the dark scheme
// (owner, manager and admin of acme) reads every kind of console page in
// headless Chromium; each is checked with axe-core, contrast included, in
// the dark colours, and written as a screenshot.
func TestConsole_DarkScheme(t *testing.T) {
	t.Parallel()
	s := storetest.Postgres().New(t, time.Now).(store)
	c, prov := oidcConsole(t, s, web.Config{Contracts: testContracts(t)}, `  - group: acme-all
    role: owner
    tenants: [acme]
    targets: [payments]
  - group: acme-all
    role: manager
    tenants: [acme]
  - group: acme-all
    role: admin
    tenants: [acme]
`,
		oidctest.User{Subject: "dee-1", Name: "Dee Dark", Email: "dee@example.test", Groups: []string{"acme-all"}})
	base := c.base
	pending := c.pending("acme", "inv-5001")
	c.create("acme", "inv-5002")
	esc := c.escalated("acme")
	// Two of each, whose headings read alike: landmark-unique (axe) holds
	// only when items are not landmarks of one name.
	c.quarantined("acme")
	c.quarantined("acme")
	c.finding("acme")
	c.finding("acme")

	b, check := visit(t)
	b.PreferDark()
	prov.SignInAs(t, "dee-1")
	for _, p := range []struct{ name, path string }{
		{"operations", "/operations"},
		{"operation", "/operations/acme/" + pending.ID},
		{"escalations", "/escalations"},
		{"escalation", escPath(esc)},
		{"quarantine", "/quarantine"},
		{"findings", "/findings"},
		{"figures", "/figures?tenant=acme"},
		{"targets", "/targets"},
		{"target", "/targets/payments"},
		{"admin-tenant", "/admin/tenants/acme"},
	} {
		if st := b.Navigate(base + p.path); st != http.StatusOK {
			t.Fatalf("%s: %d", p.path, st)
		}
		// The console's dark colours are in force (--paper of the dark
		// scheme), so axe checks their contrast.
		if got := b.Style("body", "background-color"); got != "rgb(21, 24, 28)" {
			t.Fatalf("%s: background %q, not the dark scheme's", p.path, got)
		}
		check("dark-" + p.name)
	}
}
