package web_test

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"settle/ledger"
	"settle/web"
)

// quarantinedOn records an event of tenant at target and returns its
// "tenant/id" form value.
func (c *console) quarantinedOn(tenant, target, event string) string {
	c.t.Helper()
	id, err := c.store.(ledger.InboxStore).Quarantine(context.Background(), ledger.QuarantineItem{Target: target,
		Reason: "no operation carries the event's reference", EventID: event, Tenant: tenant})
	if err != nil {
		c.t.Fatal(err)
	}
	return tenant + "/" + strconv.FormatInt(id, 10)
}

// An owner selects events on the list and reviews them on a confirmation
// page (a GET) that lists each and asks one reason; the POST dismisses
// each event the owner reviews, skips the one a colleague resolved
// meanwhile and refuses, item by item, those of another target or tenant
// slipped into the form; the list then says what was done.
func TestConsole_QuarantineBulkSelected(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{})
		mine := []string{c.quarantinedOn("acme", "payments", "evt_a"), c.quarantinedOn("acme", "payments", "evt_b"),
			c.quarantinedOn("acme", "payments", "evt_c")}
		refunds := c.quarantinedOn("acme", "refunds", "evt_refunds")
		theirs := c.quarantinedOn("globex", "payments", "evt_globex")
		b := c.as("owner")
		list := b.get("/quarantine")
		if n := bytes.Count(list.body, []byte(`data-testid="row-select"`)); n != 3 || !testid(list.body, "bulk-all", "Dismiss all 3 matching this filter…") {
			t.Fatalf("%d rows to select, want 3: %s", n, list.body)
		}
		confirm := b.get("/quarantine/dismiss?" + url.Values{"scope": {"selected"}, "item": {mine[0], mine[1], mine[2], refunds, theirs}}.Encode())
		if confirm.status != http.StatusOK || !testid(confirm.body, "bulk-heading", "Dismiss 3 quarantined events") ||
			bytes.Count(confirm.body, []byte(`data-testid="bulk-item"`)) != 5 || !testid(confirm.body, "bulk-confirm-form", "") ||
			!bytes.Contains(confirm.body, []byte(`name="_csrf"`)) || !bytes.Contains(confirm.body, []byte(`id="bulk-why"`)) ||
			!bytes.Contains(confirm.body, []byte("Not found among the events you review.")) {
			t.Fatalf("confirmation page: %d %s", confirm.status, confirm.body)
		}
		// A colleague dismisses one before the owner confirms.
		ctx := ledger.NewContextWithActor(context.Background(), ledger.Actor{Subject: "demo:bea", Name: "Bea Owner", Role: "owner"})
		if err := c.review().ResolveQuarantine(ctx, "acme", mustInt(t, strings.TrimPrefix(mine[2], "acme/")), "handled"); err != nil {
			t.Fatal(err)
		}
		form := url.Values{"item": {mine[0], mine[1], mine[2], refunds, theirs}, "why": {"test events from the dashboard"}}
		if r := b.do(http.MethodPost, "/quarantine/dismiss", form); r.status != http.StatusForbidden {
			t.Fatalf("without the CSRF token: %d", r.status)
		}
		noWhy := b.post("/quarantine/dismiss", url.Values{"item": form["item"]})
		if noWhy.status != http.StatusUnprocessableEntity || !testid(noWhy.body, "bulk-why-error", "Give the reason") ||
			bytes.Count(noWhy.body, []byte(`name="item"`)) != 2 {
			t.Fatalf("without a reason: %d %s", noWhy.status, noWhy.body)
		}
		r := b.post("/quarantine/dismiss", form)
		if r.status != http.StatusSeeOther {
			t.Fatalf("bulk dismiss: %d %s", r.status, r.body)
		}
		done := b.get(r.header.Get("Location"))
		if !testid(done.body, "done", "Dismissed 2; 1 was already resolved; 2 are not yours to review.") {
			t.Fatalf("after the bulk dismissal: %s", done.body)
		}
		for _, v := range []string{mine[0], mine[1]} {
			if q := c.quarantineItem(mustInt(t, strings.TrimPrefix(v, "acme/"))); q.ResolvedAs != ledger.QuarantineDismissed ||
				q.ResolvedByName != "Olu Owner" || q.ResolvedByRole != "owner" || q.Resolution != "test events from the dashboard" {
				t.Fatalf("dismissed item %+v", q)
			}
		}
		if q := c.quarantineItem(mustInt(t, strings.TrimPrefix(mine[2], "acme/"))); q.ResolvedByName != "Bea Owner" {
			t.Fatalf("the colleague's dismissal was overwritten: %+v", q)
		}
		for _, v := range []string{refunds, theirs} {
			_, id, _ := strings.Cut(v, "/")
			if q := c.quarantineItem(mustInt(t, id)); q.ResolvedAt != nil {
				t.Fatalf("an item the owner does not review was dismissed: %+v", q)
			}
		}
		acts, err := c.review().Actions(context.Background(), ledger.ActionFilter{Tenant: "acme"})
		n := 0
		for _, a := range acts {
			if a.Kind == ledger.ActionQuarantineResolve && a.Subject == "demo:olu" && a.RequestID != "" {
				n++
			}
		}
		if err != nil || n != 2 {
			t.Fatalf("%d dismissals in the event log, want 2 (%v)", n, err)
		}
		if empty := b.get("/quarantine/dismiss?scope=selected"); !testid(empty.body, "bulk-problem", "Select at least one event.") {
			t.Fatalf("nothing selected: %s", empty.body)
		}
	})
}

// "Dismiss all matching this filter" takes the filter of the URL, not
// the rows of the page: the confirmation page counts every open event
// matching it, lists the first 50 and carries them all; a filter matching
// more than 1,000 is refused in words.
func TestConsole_QuarantineBulkAll(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{})
		c.quarantinedMany("acme", 60)
		other := c.quarantinedOn("acme", "payments", "evt_keep")
		b := c.as("owner")
		list := b.get("/quarantine?q=ch_page_7")
		if !bytes.Contains(list.body, []byte(`name="q" value="ch_page_7"`)) || !testid(list.body, "bulk-all", "Dismiss the one matching this filter…") {
			t.Fatalf("the bulk form does not carry the filter: %s", list.body)
		}
		if all := b.get("/quarantine"); !testid(all.body, "bulk-all", "Dismiss all matching this filter (more than 50)…") {
			t.Fatalf("a list of several pages: %s", all.body)
		}
		confirm := b.get("/quarantine/dismiss?scope=all&reason=no+operation")
		if confirm.status != http.StatusOK || !testid(confirm.body, "bulk-heading", "Dismiss 61 quarantined events") ||
			!testid(confirm.body, "bulk-summary", "61 open events match this filter: reason containing no operation. The first 50 are listed") ||
			bytes.Count(confirm.body, []byte(`data-testid="bulk-item"`)) != 50 || bytes.Count(confirm.body, []byte(`name="item"`)) != 61 {
			t.Fatalf("confirmation of all matching: %d %s", confirm.status, confirm.body)
		}
		narrow := b.get("/quarantine/dismiss?scope=all&q=evt_keep")
		if !testid(narrow.body, "bulk-heading", "Dismiss 1 quarantined event") || !bytes.Contains(narrow.body, []byte(`value="`+other+`"`)) {
			t.Fatalf("a narrow filter: %s", narrow.body)
		}
		in := c.store.(ledger.InboxStore)
		for i := range 940 {
			if _, err := in.Quarantine(context.Background(), ledger.QuarantineItem{Target: "payments", Reason: "bulk cap",
				EventID: "evt-cap-" + strconv.Itoa(i), Tenant: "acme"}); err != nil {
				t.Fatal(err)
			}
		}
		capped := b.get("/quarantine/dismiss?scope=all")
		if !testid(capped.body, "bulk-problem", "More than 1000 events match this filter; narrow it") ||
			testid(capped.body, "bulk-confirm", "") {
			t.Fatalf("more than the cap: %s", capped.body)
		}
		many := url.Values{"why": {"too many"}}
		for i := 1; i <= 1001; i++ {
			many.Add("item", "acme/"+strconv.Itoa(i))
		}
		if r := b.post("/quarantine/dismiss", many); r.status != http.StatusUnprocessableEntity ||
			!strings.Contains(string(r.body), "At most 1000 events can be dismissed at once.") {
			t.Fatalf("a form of more than the cap: %d", r.status)
		}
	})
}

// The item's page lists the operations of its tenant the event may
// belong to (carrying its claimed reference) and offers the only one in
// the link form; an unattributed item offers only dismissal.
func TestConsole_QuarantineItemCandidates(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{})
		id, err := c.store.(ledger.InboxStore).Quarantine(context.Background(), ledger.QuarantineItem{Target: "payments",
			Reason: "the event's object is not the operation's", EventID: "evt_named", Reference: c.acme.RemoteKey, Tenant: "acme"})
		if err != nil {
			t.Fatal(err)
		}
		page := c.as("owner").get("/quarantine/acme/" + strconv.FormatInt(id, 10))
		if !testid(page.body, "candidate-id", c.acme.ID) || !testid(page.body, "candidate", "") ||
			!bytes.Contains(page.body, []byte(`name="operation" required maxlength="300" value="`+c.acme.ID+`"`)) {
			t.Fatalf("candidates: %s", page.body)
		}
		orphan := c.quarantinedOn("", "payments", "evt_nobody")
		un := c.as("admin-all").get("/quarantine/-/" + strings.TrimPrefix(orphan, "/"))
		if un.status != http.StatusOK || testid(un.body, "link-form", "") || !testid(un.body, "dismiss-form", "") ||
			!testid(un.body, "no-candidates", "No operation") {
			t.Fatalf("an unattributed item: %d %s", un.status, un.body)
		}
	})
}
