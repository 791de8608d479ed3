package web_test

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"settle/auth/oidctest"
	"settle/ledger"
	"settle/ledger/storetest"
	"settle/web"
)

// quarantinedMany records n items of tenant, evt-page-1…n, each naming
// its own object ch_page_i.
func (c *console) quarantinedMany(tenant string, n int) []int64 {
	c.t.Helper()
	in := c.store.(ledger.InboxStore)
	var ids []int64
	for i := 1; i <= n; i++ {
		id, err := in.Quarantine(context.Background(), ledger.QuarantineItem{Target: "payments",
			Reason: "no operation carries the event's reference", EventID: "evt-page-" + strconv.Itoa(i),
			Reference: "ref-page-" + strconv.Itoa(i), Tenant: tenant, RemoteID: "ch_page_" + strconv.Itoa(i)})
		if err != nil {
			c.t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// The quarantine shows 50 items a page, newest first; the Next link
// continues after the last row even when an item of the first page is
// resolved meanwhile; a pasted reference (spaces, other case) finds its
// item; filters stay in the URL; a tenant the owner does not review is
// refused in words.
func TestConsole_QuarantinePages(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{})
		ids := c.quarantinedMany("acme", 55)
		b := c.as("owner")
		first := b.get("/quarantine")
		if n := bytes.Count(first.body, []byte(`data-testid="quarantine-item"`)); n != 50 {
			t.Fatalf("first page shows %d items, want 50", n)
		}
		i := bytes.Index(first.body, []byte(`rel="next"`))
		if i < 0 {
			t.Fatalf("no next link: %s", first.body)
		}
		// A colleague dismisses the newest item before the owner goes on.
		ctx := ledger.NewContextWithActor(context.Background(), ledger.Actor{Subject: "demo:x", Name: "X", Role: "owner"})
		if err := c.review().ResolveQuarantine(ctx, "acme", ids[54], "handled"); err != nil {
			t.Fatal(err)
		}
		next := "/quarantine?cursor=" + strconv.FormatInt(ids[5], 10)
		if !bytes.Contains(first.body, []byte(`href="`+next+`"`)) {
			t.Fatalf("next link is not %s", next)
		}
		second := b.get(next)
		if n := bytes.Count(second.body, []byte(`data-testid="quarantine-item"`)); n != 5 ||
			!bytes.Contains(second.body, []byte(`data-item="`+strconv.FormatInt(ids[0], 10)+`"`)) ||
			!testid(second.body, "first-page", "First page") || testid(second.body, "next-page", "") {
			t.Fatalf("second page shows %d items: %s", n, second.body)
		}

		found := b.get("/quarantine?q=" + "%20EVT-PAGE-7%20")
		if n := bytes.Count(found.body, []byte(`data-testid="quarantine-item"`)); n != 1 ||
			!bytes.Contains(found.body, []byte(`data-item="`+strconv.FormatInt(ids[6], 10)+`"`)) {
			t.Fatalf("search by event id shows %d items", n)
		}
		if !strings.Contains(string(found.body), `value="EVT-PAGE-7"`) {
			t.Fatal("the search box does not keep the reference")
		}
		byObject := b.get("/quarantine?q=ch_page_9&status=all")
		if n := bytes.Count(byObject.body, []byte(`data-testid="quarantine-item"`)); n != 1 {
			t.Fatalf("search by object id shows %d items", n)
		}
		if !bytes.Contains(byObject.body, []byte(`href="/quarantine?q=ch_page_9&amp;status=resolved"`)) {
			t.Fatalf("the status tabs do not keep the filter: %s", byObject.body)
		}
		resolved := b.get("/quarantine?status=resolved")
		if n := bytes.Count(resolved.body, []byte(`data-testid="quarantine-item"`)); n != 1 {
			t.Fatalf("resolved tab shows %d items", n)
		}
		none := b.get("/quarantine?reason=contradicts")
		if !testid(none.body, "empty", "No quarantined event matches these filters.") {
			t.Fatalf("no match: %s", none.body)
		}
		foreign := b.get("/quarantine?tenant=globex")
		if foreign.status != http.StatusOK || !testid(foreign.body, "filter-problem", "You do not review the events and findings of tenant") {
			t.Fatalf("foreign tenant: %d %s", foreign.status, foreign.body)
		}
		if bad := b.get("/quarantine?cursor=x"); !testid(bad.body, "filter-problem", "That page link is not valid") {
			t.Fatal("a bad cursor is not refused in words")
		}
	})
}

// In Chromium, with and without JavaScript, an owner pastes a reference
// into the quarantine's filter form and follows the pager.
func TestConsole_QuarantinePagesBrowser(t *testing.T) {
	t.Parallel()
	s := storetest.Postgres().New(t, time.Now).(store)
	c, prov := oidcConsole(t, s, web.Config{}, `  - group: payments-acme
    role: owner
    tenants: [acme]
    targets: [payments]
`,
		oidctest.User{Subject: "olu-9", Name: "Olu Owner", Email: "olu@example.test", Groups: []string{"payments-acme"}})
	c.quarantinedMany("acme", 53)
	for _, js := range []bool{true, false} {
		b, check := visit(t)
		if !js {
			b.DisableJavaScript()
		}
		name := map[bool]string{true: "js", false: "nojs"}[js]
		prov.SignInAs(t, "olu-9")
		if st := b.Navigate(c.base + "/quarantine"); st != http.StatusOK {
			t.Fatalf("quarantine: %d", st)
		}
		if n := b.Count(`[data-testid="quarantine-item"]`); n != 50 {
			t.Fatalf("%s: first page %d items", name, n)
		}
		check("quarantine-page-1-" + name)
		if st := b.Navigate(c.base + b.Attr(`[data-testid="next-page"]`, "href")); st != http.StatusOK {
			t.Fatalf("%s: next page: %d", name, st)
		}
		if n := b.Count(`[data-testid="quarantine-item"]`); n != 3 {
			t.Fatalf("%s: second page %d items", name, n)
		}
		check("quarantine-page-2-" + name)
		b.Fill("#q", "  Ref-Page-12 ")
		if st := b.Submit(`[data-testid="quarantine-filters"] button[type="submit"]`); st != http.StatusOK {
			t.Fatalf("%s: filter: %d", name, st)
		}
		if n := b.Count(`[data-testid="quarantine-item"]`); n != 1 || !strings.Contains(b.TextByTestID("item-event-id"), "evt-page-12") {
			t.Fatalf("%s: search found %d items", name, n)
		}
		check("quarantine-search-" + name)
	}
	c.finding("acme")
	b, check := visit(t)
	b.DisableJavaScript()
	prov.SignInAs(t, "olu-9")
	if st := b.Navigate(c.base + "/findings"); st != http.StatusOK {
		t.Fatalf("findings: %d", st)
	}
	b.Fill("#q", " ch_second ")
	if st := b.Submit(`[data-testid="finding-filters"] button[type="submit"]`); st != http.StatusOK {
		t.Fatalf("findings filter: %d", st)
	}
	if n := b.Count(`[data-testid="finding"]`); n != 1 {
		t.Fatalf("findings search found %d", n)
	}
	check("findings-search-nojs")
}

// The findings page shows 50 findings a page with a Next link, finds one
// by a prefix of its operation's id as pasted, and keeps the filters in
// the URL.
func TestConsole_FindingsPages(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{})
		var fs []ledger.Finding
		for range 52 {
			fs = append(fs, c.finding("acme"))
		}
		b := c.as("owner")
		first := b.get("/findings")
		if n := bytes.Count(first.body, []byte(`data-testid="finding"`)); n != 50 {
			t.Fatalf("first page shows %d findings, want 50", n)
		}
		next := "/findings?cursor=" + strconv.FormatInt(fs[2].ID, 10)
		if !bytes.Contains(first.body, []byte(`href="`+next+`"`)) {
			t.Fatalf("next link is not %s", next)
		}
		second := b.get(next)
		if n := bytes.Count(second.body, []byte(`data-testid="finding"`)); n != 2 {
			t.Fatalf("second page shows %d findings", n)
		}
		prefix := strings.ToUpper(fs[7].OperationID[:13])
		found := b.get("/findings?kind=duplicate&q=+" + prefix)
		if n := bytes.Count(found.body, []byte(`data-testid="finding"`)); n != 1 ||
			!bytes.Contains(found.body, []byte(`data-item="`+strconv.FormatInt(fs[7].ID, 10)+`"`)) {
			t.Fatalf("search by operation id prefix shows %d findings", n)
		}
		if !bytes.Contains(found.body, []byte(`<option value="duplicate" selected>`)) {
			t.Fatal("the kind filter is not kept")
		}
		if none := b.get("/findings?status=resolved"); !testid(none.body, "empty", "No audit finding has been acknowledged") {
			t.Fatalf("resolved tab: %s", none.body)
		}
		if bad := b.get("/findings?kind=nonsense"); !testid(bad.body, "filter-problem", "Choose a kind from the list.") {
			t.Fatal("a kind not offered is not refused in words")
		}
	})
}
