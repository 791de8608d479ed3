package web_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"settle/auth"
	"settle/ledger"
	"settle/static"
	"settle/web"
)

// matrixCase says how to reach one console route and what it answers when
// allowed: a route the table gains without a case here fails the matrix.
type matrixCase struct {
	url func(c *console, op ledger.Operation) string
	ok  int
	// form is a minimal valid form for a write (nil for a read); the
	// matrix adds a valid CSRF token, so the permission alone decides.
	form func(c *console, op ledger.Operation) url.Values
}

// postCase prepares, for a POST route, a record of op's tenant and returns
// the path and a minimal valid form; the matrix sends it with a valid CSRF
// token, so that the route's ok is the write succeeding.
type postCase func(c *console, op ledger.Operation) (path string, form url.Values)

// postCases are the POST routes' preparations, by "POST path", each
// feature's in its own test file.
var postCases = mergePosts(escalationPosts)

func mergePosts(all ...map[string]postCase) map[string]postCase {
	out := map[string]postCase{}
	for _, m := range all {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

var matrixCases = mergeCases(coreCases, escalationCases, inboxCases, figureCases, adminCases)

func mergeCases(all ...map[string]matrixCase) map[string]matrixCase {
	out := map[string]matrixCase{}
	for _, m := range all {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// coreCases cover the support pages; each feature's cases are in its own
// test file.
var coreCases = map[string]matrixCase{
	"GET /":                       {url: func(*console, ledger.Operation) string { return "/" }, ok: http.StatusSeeOther},
	"GET /operations":             {url: func(*console, ledger.Operation) string { return "/operations" }, ok: http.StatusOK},
	"GET /operations/:tenant/:id": {url: func(c *console, op ledger.Operation) string { return c.opPath(op) }, ok: http.StatusOK},
	"GET /static/:name":           {url: func(*console, ledger.Operation) string { return static.URL("style.css") }, ok: http.StatusOK},
	"GET /settings":               {url: func(*console, ledger.Operation) string { return "/settings" }, ok: http.StatusOK},
	"POST /settings": {url: func(*console, ledger.Operation) string { return "/settings" }, ok: http.StatusSeeOther,
		form: func(*console, ledger.Operation) url.Values { return url.Values{"zone": {"Europe/Berlin"}} }},
}

// The authorization matrix: every console route × every role (and
// anonymous, and a person with no role) × own and other tenant, each
// expected status derived from the route's declared permission.
func TestConsole_AuthorizationMatrix(t *testing.T) {
	t.Parallel()
	routes := web.ConsoleRoutes()
	for _, r := range routes {
		if r.Permission == "" && !r.Public {
			t.Errorf("route %s %s declares no permission", r.Method, r.Path)
		}
		if _, ok := matrixCases[r.Method+" "+r.Path]; !ok {
			t.Errorf("route %s %s has no case in the authorization matrix", r.Method, r.Path)
		}
	}
	if t.Failed() {
		return
	}
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{})
		for _, r := range routes {
			mc := matrixCases[r.Method+" "+r.Path]
			post := postCases[r.Method+" "+r.Path]
			for _, who := range []string{"", "none", "support", "owner", "manager", "admin"} {
				for _, tenant := range []string{"own", "other"} {
					op := c.acme
					if tenant == "other" {
						op = c.globex
					}
					want := mc.ok
					p := principals[who]
					write := r.Method != http.MethodGet
					switch {
					case r.Public:
					case who == "" && write:
						want = http.StatusUnauthorized
					case who == "":
						want = http.StatusSeeOther
					case len(p.Bindings) == 0, !p.Has(r.Permission):
						want = http.StatusForbidden
					case r.Tenanted && !p.Can(r.Permission, op.Tenant, ""):
						want = http.StatusNotFound
					}
					name := fmt.Sprintf("%s %s/%s/%s", r.Method, r.Path, or(who, "anonymous"), tenant)
					t.Run(name, func(t *testing.T) {
						b := c.as(who)
						var got response
						switch {
						case post != nil:
							path, form := post(c, op)
							got = b.do(r.Method, path, b.withCSRF(form))
						case mc.form != nil:
							got = b.do(r.Method, mc.url(c, op), b.withCSRF(mc.form(c, op)))
						default:
							got = b.do(r.Method, mc.url(c, op), nil)
						}
						if got.status != want {
							t.Fatalf("%s: status %d, want %d: %.300s", name, got.status, want, got.body)
						}
						if who == "" && !r.Public && !write {
							if loc := got.header.Get("Location"); !strings.HasPrefix(loc, "/login?return=") {
								t.Fatalf("anonymous sent to %q", loc)
							}
						}
					})
				}
			}
		}
	})
}

// withCSRF returns form (nil stays nil) with the CSRF token of b's cookie,
// which any console page sets, signed in or not.
func (b *browser) withCSRF(form url.Values) url.Values {
	b.c.t.Helper()
	if form == nil {
		return nil
	}
	out := url.Values{}
	for k, v := range form {
		out[k] = v
	}
	out.Set(web.CSRFField, b.csrfCookie())
	return out
}

func or(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// Every role may be checked against the permission table: the matrix
// above is only as good as the roles it walks.
func TestConsole_MatrixCoversEveryRole(t *testing.T) {
	t.Parallel()
	seen := map[auth.Role]bool{}
	for _, p := range principals {
		for _, b := range p.Bindings {
			seen[b.Role] = true
		}
	}
	for _, r := range []auth.Role{auth.Support, auth.Owner, auth.Manager, auth.Admin} {
		if !seen[r] {
			t.Errorf("no test principal holds role %s", r)
		}
	}
}

// A search that finds no operation or several shows the list: two intent
// references differing in case are both found by a third spelling, and
// the exact one alone when it is pasted exactly.
func TestConsole_SearchListsSeveral(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{})
		c.create("acme", "INV-1001")
		b := c.as("support")
		if r := b.get("/operations?q=inv"); r.status != http.StatusOK || !testid(r.body, "empty", "No operation you can see") {
			t.Fatalf("search with none found: %d %s", r.status, r.body)
		}
		if r := b.get("/operations?q=" + url.QueryEscape("Inv-1001")); r.status != http.StatusOK ||
			strings.Count(string(r.body), `data-testid="operation-row"`) != 2 {
			t.Fatalf("search with two found: %d %s", r.status, r.body)
		}
		if r := b.get("/operations?q=inv-1001"); r.status != http.StatusSeeOther || r.header.Get("Location") != c.opPath(c.acme) {
			t.Fatalf("the exact reference: %d to %q", r.status, r.header.Get("Location"))
		}
	})
}

// Support finds the pending operation by its intent reference, reads
// "Confirmation pending" and its story: the send, the timeout, the lookup.
func TestConsole_SupportFindsAndReads(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{})
		b := c.as("support")
		// One operation found opens it, however the reference was pasted.
		for _, q := range []string{"inv-1001", " inv-1001 ", "INV-1001", c.acme.ID[:8], strings.ToUpper(c.acme.ID)} {
			r := b.get("/operations?q=" + url.QueryEscape(q))
			if r.status != http.StatusSeeOther || r.header.Get("Location") != c.opPath(c.acme) {
				t.Fatalf("search %q: %d to %q", q, r.status, r.header.Get("Location"))
			}
		}
		if r := b.get("/operations?q=inv-2002"); !testid(r.body, "empty", "No operation you can see") {
			t.Fatalf("another tenant's operation was found: %s", r.body)
		}
		list := b.get("/operations")
		if !testid(list.body, "count-UNKNOWN", "1") || !testid(list.body, "count-all", "1") {
			t.Fatalf("counts: %s", list.body)
		}
		d := b.get(c.opPath(c.acme))
		// The page is named by its intent reference, in the tab and the h1.
		if !bytes.Contains(d.body, []byte("<title>inv-1001 · payments · acme")) {
			t.Errorf("title: %s", d.body)
		}
		for _, want := range []struct{ id, text string }{
			{"operation-name", "inv-1001"},
			{"status", "Confirmation pending"},
			{"meaning", "Confirmation pending — do not tell the customer it failed or succeeded"},
			{"ref-intent-ref", "inv-1001"},
			{"ref-remote-key", c.acme.RemoteKey},
			{"fact-owner", "Payments team"},
			{"payload-note", "The request itself is shown only"},
		} {
			if !testid(d.body, want.id, want.text) {
				t.Errorf("detail lacks %s %q", want.id, want.text)
			}
		}
		for _, want := range []string{"Sent to payments (attempt 1)", "No answer from the target: timeout.",
			"settle looked it up at payments", "The lookup found no object carrying settle&#39;s reference."} {
			if !bytes.Contains(d.body, []byte(want)) {
				t.Errorf("timeline lacks %q", want)
			}
		}
		if bytes.Contains(d.body, []byte(secretField)) || testid(d.body, "payload", "") {
			t.Fatal("support sees the payload")
		}
		if bytes.Contains(d.body, []byte("<form method=\"post\" action=\"/operations")) {
			t.Fatal("support is offered a write action")
		}
	})
}

// The payload is rendered for owners and admins only.
func TestConsole_PayloadOwnersAndAdminsOnly(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{})
		for who, sees := range map[string]bool{"support": false, "manager": false, "owner": true, "admin": true, "refunds-owner": false} {
			r := c.as(who).get(c.opPath(c.acme))
			if r.status != http.StatusOK {
				t.Fatalf("%s: %d", who, r.status)
			}
			if got := bytes.Contains(r.body, []byte(secretField)); got != sees || testid(r.body, "payload", "") != sees {
				t.Errorf("%s sees the payload: %v, want %v", who, got, sees)
			}
		}
	})
}

// Another tenant's operation answers byte for byte like an unknown one.
func TestConsole_OtherTenantIs404LikeUnknown(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{})
		b := c.as("support")
		b.token() // settle the CSRF cookie, so every page carries the same token
		other := b.get(c.opPath(c.globex))
		for _, path := range []string{"/operations/acme/00000000-0000-4000-8000-000000000000",
			"/operations/globex/00000000-0000-4000-8000-000000000000", "/operations/acme/" + c.globex.ID,
			"/operations/acme/not-a-uuid"} {
			unknown := b.get(path)
			if other.status != http.StatusNotFound || unknown.status != http.StatusNotFound {
				t.Fatalf("statuses %d and %d, want 404", other.status, unknown.status)
			}
			if !bytes.Equal(other.body, unknown.body) {
				t.Fatalf("another tenant's page differs from %s:\n%s\n---\n%s", path, other.body, unknown.body)
			}
		}
		if !testid(other.body, "error-heading", "Not found") || bytes.Contains(other.body, []byte("globex")) {
			t.Fatalf("404 page: %s", other.body)
		}
	})
}

// A state-changing console request without the CSRF token is refused, as
// is a cross-site one; with the token from the page it goes through.
func TestConsole_CSRF(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{})
		b := c.as("support")
		tok := b.token()
		for name, r := range map[string]response{
			"NoToken":            b.do(http.MethodPost, "/logout", url.Values{}),
			"WrongToken":         b.do(http.MethodPost, "/logout", url.Values{"_csrf": {"forged"}}),
			"SameOriginNoToken":  b.do(http.MethodPost, "/logout", url.Values{}, "Sec-Fetch-Site", "same-origin"),
			"CrossSiteWithToken": b.do(http.MethodPost, "/logout", url.Values{"_csrf": {tok}}, "Sec-Fetch-Site", "cross-site"),
		} {
			if r.status != http.StatusForbidden || !testid(r.body, "error-heading", "Not allowed") {
				t.Errorf("%s: %d %s", name, r.status, r.body)
			}
		}
		if r := b.do(http.MethodPost, "/logout", url.Values{"_csrf": {tok}}); r.status != http.StatusSeeOther {
			t.Fatalf("sign-out with the token: %d %s", r.status, r.body)
		}
		if r := b.get("/operations"); r.status != http.StatusSeeOther {
			t.Fatalf("after sign-out: %d, want a redirect to sign in", r.status)
		}
	})
}

// The CSRF cookie is Secure unless the server is told otherwise, and
// always HttpOnly and SameSite=Lax.
func TestConsole_CSRFCookie(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{InsecureCookies: false})
		_ = c
		req, _ := http.NewRequest(http.MethodGet, c.base+"/operations", nil)
		req.AddCookie(&http.Cookie{Name: asCookie, Value: "support"})
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		var found bool
		for _, k := range resp.Cookies() {
			if k.Name == "settle_csrf" {
				found = true
				if !k.HttpOnly || k.SameSite != http.SameSiteLaxMode {
					t.Fatalf("cookie %+v", k)
				}
			}
		}
		if !found {
			t.Fatal("no CSRF cookie")
		}
	})
}

// With the read-only switch every console write is refused on the server
// with a page saying so; reading and signing out still work.
func TestConsole_ReadOnly(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		for _, ro := range []bool{false, true} {
			c := newConsole(t, open(t), web.Config{ReadOnly: ro})
			b := c.as("admin")
			tok := b.token()
			r := b.do(http.MethodPost, "/operations", url.Values{"_csrf": {tok}})
			want := http.StatusMethodNotAllowed
			if ro {
				want = http.StatusServiceUnavailable
			}
			if r.status != want || (ro && !testid(r.body, "error-message", "settle is in read-only mode")) {
				t.Fatalf("read-only %v: %d %s", ro, r.status, r.body)
			}
			if !ro && !testid(r.body, "error-heading", "Not possible here") {
				t.Fatalf("405 page: %s", r.body)
			}
			if r := b.get(c.opPath(c.acme)); r.status != http.StatusOK || testid(r.body, "read-only", "Read-only mode") != ro {
				t.Fatalf("read-only %v: reading: %d, notice %v", ro, r.status, testid(r.body, "read-only", ""))
			}
			if r := b.do(http.MethodPost, "/logout", url.Values{"_csrf": {tok}}); r.status != http.StatusSeeOther {
				t.Fatalf("read-only %v: sign-out: %d", ro, r.status)
			}
		}
	})
}

// Console pages carry the CSP and friends; a server error shows its
// request id and nothing of the cause; the API keeps its JSON errors.
func TestConsole_HeadersAndErrors(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{})
		b := c.as("support")
		r := b.get("/operations")
		for h, want := range map[string]string{
			"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
			"Referrer-Policy":         "same-origin",
			"X-Content-Type-Options":  "nosniff",
			"Cache-Control":           "no-store",
		} {
			if got := r.header.Get(h); got != want {
				t.Errorf("%s: %q, want %q", h, got, want)
			}
		}
		if !strings.HasPrefix(r.header.Get("Server-Timing"), "app;dur=") || !testid(r.body, "served-in", "served in ") {
			t.Errorf("no server time: %v", r.header)
		}
		boom := b.get("/operations?target=boom")
		rid := boom.header.Get("X-Request-Id")
		if boom.status != http.StatusInternalServerError || rid == "" || !testid(boom.body, "request-id", rid) ||
			bytes.Contains(boom.body, []byte("internal detail")) {
			t.Fatalf("500 page: %d %s", boom.status, boom.body)
		}
		if r := b.get("/nowhere"); r.status != http.StatusNotFound || !testid(r.body, "error-heading", "Not found") {
			t.Fatalf("console 404: %d %s", r.status, r.body)
		}
		api := b.get("/api/v1/operations") // a browser has no bearer token
		if api.status != http.StatusUnauthorized || !strings.HasPrefix(api.header.Get("Content-Type"), "application/json") {
			t.Fatalf("API error: %d %s", api.status, api.body)
		}
		css := b.get(static.URL("style.css"))
		if css.status != http.StatusOK || !strings.HasPrefix(css.header.Get("Content-Type"), "text/css") ||
			!strings.Contains(css.header.Get("Cache-Control"), "immutable") || css.header.Get("Set-Cookie") != "" {
			t.Fatalf("static: %d %v", css.status, css.header)
		}
		if r := b.get("/static/style.css"); r.status != http.StatusNotFound {
			t.Fatalf("unhashed static name: %d", r.status)
		}
		if r := c.as("").get("/operations?q=inv-1001"); r.header.Get("Location") != "/login?return="+url.QueryEscape("/operations?q=inv-1001") {
			t.Fatalf("anonymous: %d %q", r.status, r.header.Get("Location"))
		}
		if bytes.Contains(r.body, []byte(`data-testid="read-only"`)) {
			t.Error("a read-only notice on a server that is not read-only")
		}
		if r := c.as("none").get("/operations"); r.status != http.StatusForbidden || !testid(r.body, "no-role", "You have no role") {
			t.Fatalf("no role: %d %s", r.status, r.body)
		}
	})
}

// Listings page by keyset: the next link carries the cursor and keeps the
// filters; the last page links back to the first.
func TestConsole_Pagination(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{})
		for i := range ledger.DefaultListLimit + 2 {
			c.create("acme", fmt.Sprintf("inv-page-%03d", i))
		}
		b := c.as("support")
		first := b.get("/operations?state=PREPARED")
		if n := bytes.Count(first.body, []byte(`data-testid="operation-row"`)); n != ledger.DefaultListLimit {
			t.Fatalf("first page: %d rows", n)
		}
		if !testid(first.body, "count-PREPARED", fmt.Sprint(ledger.DefaultListLimit+2)) {
			t.Fatalf("PREPARED count wrong: %s", first.body)
		}
		m := regexpNext.FindSubmatch(first.body)
		if m == nil {
			t.Fatalf("no next link: %s", first.body)
		}
		next := strings.ReplaceAll(string(m[1]), "&amp;", "&")
		if !strings.Contains(next, "state=PREPARED") || !strings.Contains(next, "cursor=") {
			t.Fatalf("next link %q drops the filter or the cursor", next)
		}
		second := b.get(next)
		if n := bytes.Count(second.body, []byte(`data-testid="operation-row"`)); n != 2 {
			t.Fatalf("second page: %d rows", n)
		}
		if testid(second.body, "next-page", "") || !testid(second.body, "first-page", "First page") {
			t.Fatalf("second page links: %s", second.body)
		}
		if bad := b.get("/operations?cursor=nonsense"); bad.status != http.StatusOK || !testid(bad.body, "filter-problem", "invalid cursor") {
			t.Fatalf("bad cursor: %d %s", bad.status, bad.body)
		}
	})
}
