package web_test

import (
	"net/http"
	"testing"
	"time"

	"settle/auth/oidctest"
	"settle/ledger/storetest"
	"settle/web"
)

// TestConsole_NarrowScreens: on a phone's 390 px and at 1280 px the
// support, operation and escalation pages never make a person scroll
// sideways; wide tables scroll inside their own box. Each page passes axe
// and is written as a screenshot.
func TestConsole_NarrowScreens(t *testing.T) {
	t.Parallel()
	s := storetest.Postgres().New(t, time.Now).(store)
	c, prov := oidcConsole(t, s, web.Config{Contracts: testContracts(t)}, `  - group: acme-owners
    role: owner
    tenants: [acme]
    targets: [payments]
`,
		oidctest.User{Subject: "nia-1", Name: "Nia Narrow", Email: "nia@example.test", Groups: []string{"acme-owners"}})
	base := c.base
	pending := c.pending("acme", "inv-6001")
	esc := c.escalated("acme")
	c.create("acme", "order-with-a-rather-long-intent-reference-6002")

	b, check := visit(t)
	prov.SignInAs(t, "nia-1")
	for _, w := range []int64{390, 1280} {
		b.Viewport(w, 844)
		for _, p := range []struct{ name, path string }{
			{"operations", "/operations"},
			{"operation", "/operations/acme/" + pending.ID},
			{"escalations", "/escalations"},
			{"escalation", escPath(esc)},
		} {
			if st := b.Navigate(base + p.path); st != http.StatusOK {
				t.Fatalf("%s: %d", p.path, st)
			}
			if b.ScrollsSideways() {
				b.Screenshot("sideways-" + p.name)
				t.Errorf("%s at %d px scrolls sideways", p.path, w)
			}
			if p.name == "operation" {
				if got := b.TextByTestID("operation-name"); got != "inv-6001" {
					t.Errorf("the operation page's heading names %q, not its intent reference", got)
				}
			}
			check(p.name)
		}
	}
}
