package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"settle/web"
)

// Every console page and form answers NUL, control characters and very
// long text in its query, path and fields with a page of its own — a
// refusal or an empty result — never a 500, on both stores (PostgreSQL
// refuses NUL in text where SQLite stores it).
func TestConsole_HostileTextNeverFails(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 3000)
	hostile := []string{"\x00", "a\x00b", "\x1b[31m", "\u202e", long, "%zz"}
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{Contracts: testContracts(t)})
		op := c.escalated("acme")
		b := c.as("admin")
		var urls []string
		for _, h := range hostile {
			e := url.QueryEscape(h)
			p := url.PathEscape(h)
			for _, q := range []string{"q", "state", "target", "tenant", "age", "cursor"} {
				urls = append(urls, "/operations?"+q+"="+e)
			}
			for _, q := range []string{"target", "tenant", "show", "sort", "cursor"} {
				urls = append(urls, "/escalations?"+q+"="+e)
			}
			for _, q := range []string{"tenant", "window", "from", "to"} {
				urls = append(urls, "/figures?"+q+"="+e, "/figures.csv?"+q+"="+e)
			}
			urls = append(urls, "/figures/overview?sort="+e+"&dir="+e, "/quarantine?status="+e+"&done="+e,
				"/quarantine/acme/"+p, "/quarantine/"+p+"/1", "/quarantine/dismiss?scope=selected&item="+e,
				"/quarantine/dismiss?scope=all&q="+e+"&age="+e+"&tenant="+e, "/quarantine?done=bulk&dismissed="+e,
				"/findings?done="+e, "/admin?tenant="+e, "/admin/tenants/"+p, "/targets/"+p,
				"/operations/acme/"+p, "/operations/"+p+"/"+op.ID, "/escalations/acme/"+p, "/escalations/"+p+"/"+op.ID)
		}
		for _, u := range urls {
			if r := b.get(u); r.status >= 500 {
				t.Errorf("GET %q: %d %s", u, r.status, r.body)
			}
		}
		csrf := b.token()
		for _, h := range hostile {
			p := url.PathEscape(h)
			for _, f := range []struct {
				path string
				form url.Values
			}{
				{"/escalations/acme/" + op.ID + "/propose", url.Values{"kind": {"confirm_succeeded"}, "remote_ref": {h}, "reason": {h}}},
				{"/escalations/acme/" + op.ID + "/propose", url.Values{"kind": {h}, "reason": {"checked"}}},
				{"/escalations/acme/" + op.ID + "/approve", url.Values{"proposal": {h}}},
				{"/escalations/acme/" + op.ID + "/reject", url.Values{"proposal": {h}, "reason": {h}}},
				{"/escalations/acme/" + p + "/propose", url.Values{"kind": {"confirm_not_applied"}, "reason": {"checked"}}},
				{"/quarantine/acme/" + p + "/link", url.Values{"operation": {h}, "reason": {h}}},
				{"/quarantine/acme/" + p + "/dismiss", url.Values{"reason": {h}}},
				{"/quarantine/dismiss", url.Values{"item": {h, "acme/" + p}, "why": {h}}},
				{"/findings/acme/" + p + "/acknowledge", url.Values{"note": {h}}},
				{"/admin/tenants/acme/callback", url.Values{"url": {h}}},
				{"/admin/tenants/acme/tokens/" + p + "/revoke", url.Values{}},
				{"/admin/tenants/" + p + "/tokens", url.Values{}},
			} {
				f.form.Set("_csrf", csrf)
				if r := b.do(http.MethodPost, f.path, f.form); r.status >= 500 {
					t.Errorf("POST %q %v: %d %s", f.path, f.form, r.status, r.body)
				}
			}
		}
		// Nothing hostile became an approved resolution or a token.
		if got, err := c.store.Get(adminCtx, op.Tenant, op.ID); err != nil || got.State != op.State {
			t.Errorf("the escalated operation is now %s (%v)", got.State, err)
		}
	})
}
