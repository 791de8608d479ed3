package web_test

import (
	"context"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"settle/ledger"
	"settle/resolve"
	"settle/web"
)

// propose records who's proposal of "confirm not applied" on op, as the
// console's propose form does through the resolve service.
func (c *console) propose(who string, op ledger.Operation) ledger.Resolution {
	c.t.Helper()
	r, err := resolve.New(c.store, nil, nil, nil).Propose(actor(who), resolve.TenantScope(op.Tenant), op.Tenant, op.ID,
		resolve.Proposal{Kind: ledger.KindConfirmNotApplied, Reason: "the provider's dashboard shows nothing"})
	if err != nil {
		c.t.Fatal(err)
	}
	return r
}

// approve records who's approval of proposal r.
func (c *console) approve(who string, r ledger.Resolution) {
	c.t.Helper()
	if _, err := resolve.New(c.store, nil, nil, nil).Approve(actor(who), resolve.TenantScope(r.Tenant), r.Tenant, r.ID,
		resolve.Approval{}); err != nil {
		c.t.Fatal(err)
	}
}

// actor is the context of one of the test principals acting as an owner.
func actor(who string) context.Context {
	p := principals[who]
	return ledger.NewContextWithActor(context.Background(), ledger.Actor{Subject: p.Subject, Name: p.Name, Role: "owner"})
}

var navCountRe = regexp.MustCompile(`data-testid="nav-(\w+)"[^>]*>\s*\w+\s*<span class="count" aria-hidden="true" data-testid="nav-count">([^<]+)</span>\s*<span class="visually-hidden">, ([^<]+)</span>`)

// navCounts reads the nav's counts from a page: entry → the badge and
// the words a screen reader hears.
func navCounts(body []byte) map[string][2]string {
	out := map[string][2]string{}
	for _, m := range navCountRe.FindAllSubmatch(body, -1) {
		out[string(m[1])] = [2]string{string(m[2]), string(m[3])}
	}
	return out
}

// The nav counts what awaits each person: beside Escalations a
// colleague's open proposals on their targets (never their own), beside
// Quarantine the open events they may review; nobody sees another
// tenant's or another target's, and support sees no counts.
func TestConsole_LiveNavCounts(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{})
		c.propose("owner", c.escalatedUnanswered("acme"))
		c.propose("owner", c.escalatedUnanswered("acme"))
		c.propose("owner-b", c.escalatedUnanswered("acme"))
		c.escalated("acme") // no proposal yet: nothing to approve
		c.propose("owner", c.escalatedUnanswered("globex"))
		c.quarantined("acme")
		c.quarantined("globex")

		for who, want := range map[string]map[string][2]string{
			"owner-b": {"Escalations": {"2", "2 awaiting your approval"}, "Quarantine": {"1", "1 open for review"}},
			"owner":   {"Escalations": {"1", "1 awaiting your approval"}, "Quarantine": {"1", "1 open for review"}},
			// Another target's owner: payments' proposals and events are not theirs.
			"refunds-owner": {},
			"admin":         {"Quarantine": {"1", "1 open for review"}},
			"support":       {},
			"manager":       {},
		} {
			t.Run(who, func(t *testing.T) {
				b := c.as(who)
				for _, path := range []string{"/operations", "/settings"} {
					r := b.get(path)
					if r.status != http.StatusOK {
						t.Fatalf("%s: %d", path, r.status)
					}
					if got := navCounts(r.body); len(got) != len(want) || got["Escalations"] != want["Escalations"] ||
						got["Quarantine"] != want["Quarantine"] {
						nav := regexp.MustCompile(`<nav.*</nav>`).Find(r.body)
						t.Fatalf("%s: nav counts %v, want %v: %s", path, got, want, nav)
					}
				}
				if want["Escalations"][0] == "" {
					return
				}
				// The count is the length of the queue's own "awaiting my approval" list.
				r := b.get("/escalations?mine=1")
				if n := strings.Count(string(r.body), `data-testid="escalation-row"`); want["Escalations"][0] != strconv.Itoa(n) {
					t.Fatalf("the awaiting-me list holds %d rows, the nav says %s", n, want["Escalations"][0])
				}
			})
		}
	})
}

// livePages are the pages that refresh while open, with who may read them.
var livePages = map[string]string{
	"/operations":            "support",
	"/escalations":           "owner",
	"/escalations/proposals": "owner",
	"/quarantine":            "owner",
	"/findings":              "admin",
}

// A live page answers its script's request (LiveHeader) with only its
// live parts, never cached; the whole page carries the Reload link and
// the time it was read; a page that is not live ignores the header.
func TestConsole_LiveFragment(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{})
		esc := c.escalated("acme")
		pages := map[string]string{c.opPath(c.acme): "support"}
		for path, who := range livePages {
			pages[path] = who
		}
		for path, who := range pages {
			b := c.as(who)
			whole := b.get(path)
			if whole.status != http.StatusOK || !strings.Contains(string(whole.body), "<!doctype html>") ||
				!strings.Contains(string(whole.body), `data-testid="live-region"`) ||
				!strings.Contains(string(whole.body), `<a href="`+path+`" data-testid="live-reload">Reload</a>`) ||
				!testid(whole.body, "live-updated", "") || !strings.Contains(string(whole.body), `data-live-every="15000"`) {
				t.Fatalf("%s as %s, the whole page: %d %s", path, who, whole.status, whole.body)
			}
			part := b.do(http.MethodGet, path, nil, web.LiveHeader, "1")
			body := string(part.body)
			if part.status != http.StatusOK || part.header.Get(web.LiveHeader) != "fragment" ||
				part.header.Get("Cache-Control") != "no-store" {
				t.Fatalf("%s as %s, the live parts: %d %v", path, who, part.status, part.header)
			}
			for _, want := range []string{`<nav data-live-part="nav">`, `<span data-live-part="updated">`, `<div data-live-part="region">`} {
				if !strings.Contains(body, want) {
					t.Fatalf("%s: the live parts lack %s: %s", path, want, body)
				}
			}
			if strings.Contains(body, "<!doctype") || strings.Contains(body, "<head>") || strings.Contains(body, "<footer") ||
				strings.Contains(body, "live-bar") {
				t.Fatalf("%s: the live parts hold the whole page: %s", path, body)
			}
			// The region is the page's own content.
			h1 := regexp.MustCompile(`<h1.*?</h1>`).FindString(string(whole.body))
			if h1 == "" || !strings.Contains(body, h1) {
				t.Fatalf("%s: the region lacks the page's heading %q: %s", path, h1, body)
			}
		}
		// A decision page (a form a person fills) is not live.
		r := c.as("owner").do(http.MethodGet, escPath(esc), nil, web.LiveHeader, "1")
		if r.status != http.StatusOK || !strings.Contains(string(r.body), "<!doctype html>") ||
			strings.Contains(string(r.body), "data-live-part=\"region\"") || r.header.Get(web.LiveHeader) != "" {
			t.Fatalf("the decision page answered the live header: %d %s", r.status, r.body)
		}
	})
}

// The live parts are the page's own route: whoever may not read the page
// may not read its parts either, with the same answer.
func TestConsole_LiveFragmentPermission(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{})
		paths := []string{c.opPath(c.acme), c.opPath(c.globex)}
		for path := range livePages {
			paths = append(paths, path)
		}
		for _, who := range []string{"", "none", "support", "owner", "manager", "admin", "refunds-owner"} {
			b := c.as(who)
			for _, path := range paths {
				page, part := b.get(path), b.do(http.MethodGet, path, nil, web.LiveHeader, "1")
				if page.status != part.status || page.header.Get("Location") != part.header.Get("Location") {
					t.Errorf("%s as %q: the page answers %d, its live parts %d", path, who, page.status, part.status)
				}
			}
		}
	})
}
