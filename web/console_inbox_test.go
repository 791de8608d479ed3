package web_test

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"settle/ledger"
	"settle/web"
)

// post sends a console form with the CSRF token of b's cookie.
func (b *browser) post(path string, form url.Values) response {
	b.c.t.Helper()
	return b.do(http.MethodPost, path, b.withCSRF(form))
}

func (c *console) review() ledger.ReviewStore { return c.store.(ledger.ReviewStore) }

// quarantineItem returns item id as every tenant's reviewer sees it.
func (c *console) quarantineItem(id int64) ledger.QuarantineItem {
	c.t.Helper()
	items, err := c.review().ListQuarantine(context.Background(),
		ledger.QuarantineFilter{AllTenants: true, Unattributed: true})
	if err != nil {
		c.t.Fatal(err)
	}
	for _, q := range items {
		if q.ID == id {
			return q
		}
	}
	c.t.Fatalf("no quarantine item %d", id)
	return ledger.QuarantineItem{}
}

// An owner finds the quarantined event, links it to the tenant's pending
// operation by its intent reference with a reason: the item is closed and
// linked, the operation is due for the reconciler but still "Confirmation
// pending", and its page names who linked it, why, under which request.
func TestConsole_QuarantineLink(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{})
		id := c.quarantined("acme")
		item := strconv.FormatInt(id, 10)
		b := c.as("owner")
		list := b.get("/quarantine")
		for _, want := range []struct{ id, text string }{
			{"item-event-id", "evt_acme"}, {"item-remote-id", "ch_remote_77"}, {"item-tenant", "acme"},
			{"item-reason", "no operation carries"}, {"item-status", "Open"},
		} {
			if !testid(list.body, want.id, want.text) {
				t.Errorf("quarantine list lacks %s %q", want.id, want.text)
			}
		}
		if main := list.body[bytes.Index(list.body, []byte("<main")):]; bytes.Contains(main, []byte(`method="post"`)) ||
			testid(main, "link-form", "") || testid(main, "dismiss-form", "") {
			t.Fatalf("the list carries forms of its own: %s", list.body)
		}
		if !bytes.Contains(list.body, []byte(`href="/quarantine/acme/`+item+`"`)) {
			t.Fatalf("the row does not link the item's page: %s", list.body)
		}
		page := b.get("/quarantine/acme/" + item)
		for _, want := range []struct{ id, text string }{
			{"item-heading", "Quarantined event evt_acme"}, {"item-reference", "ref-unknown-77"}, {"item-claimed", "acme"},
			{"item-remote-id", "ch_remote_77"}, {"item-reason", "no operation carries"}, {"item-status", "Open"},
		} {
			if !testid(page.body, want.id, want.text) {
				t.Errorf("item page lacks %s %q", want.id, want.text)
			}
		}
		if page.status != http.StatusOK || !testid(page.body, "link-form", "") || !testid(page.body, "dismiss-form", "") {
			t.Fatalf("no actions offered: %d %s", page.status, page.body)
		}
		if before := c.quarantined("globex"); bytes.Contains(b.get("/quarantine").body, []byte(`data-item="`+strconv.FormatInt(before, 10)+`"`)) {
			t.Fatal("another tenant's item is listed")
		}

		r := b.post("/quarantine/acme/"+item+"/link", url.Values{"operation": {"inv-1001"},
			"reason": {"the event's metadata carries our reference"}})
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "/quarantine?done=linked" {
			t.Fatalf("link: %d %s", r.status, r.body)
		}
		rid := r.header.Get("X-Request-Id")
		q := c.quarantineItem(id)
		if q.OperationID != c.acme.ID || q.ResolvedAt == nil || q.ResolvedBy != "demo:olu" {
			t.Fatalf("linked item %+v", q)
		}
		op, err := c.store.Get(context.Background(), "acme", c.acme.ID)
		if err != nil || op.State != ledger.Unknown || op.Fence != c.acme.Fence || op.NextReconcileAt == nil ||
			op.NextReconcileAt.After(time.Now()) {
			t.Fatalf("operation after link: %s fence %d next %v %v; want UNKNOWN, fence %d, due now", op.State, op.Fence,
				op.NextReconcileAt, err, c.acme.Fence)
		}
		acts, err := c.review().Actions(context.Background(), ledger.ActionFilter{Tenant: "acme", OperationID: c.acme.ID})
		if err != nil || len(acts) != 1 || acts[0].Kind != ledger.ActionQuarantineLink || acts[0].Role != "owner" ||
			acts[0].RequestID == "" || acts[0].RequestID != rid || acts[0].Object != item {
			t.Fatalf("link action %+v (request %q) %v", acts, rid, err)
		}
		done := b.get("/quarantine?status=resolved")
		if !testid(done.body, "resolution-operation", c.acme.ID) || !testid(done.body, "resolution-reason", "the event&#39;s metadata") ||
			!testid(done.body, "resolution-by", "Olu Owner (owner)") || !testid(done.body, "resolution", "Linked to") ||
			!bytes.Contains(done.body, []byte(`data-kind="linked"`)) {
			t.Fatalf("resolved view: %s", done.body)
		}
		again := b.get("/quarantine/acme/" + item)
		if again.status != http.StatusOK || !testid(again.body, "already", "Already linked to operation "+c.acme.ID+" by Olu Owner (owner) at ") ||
			testid(again.body, "link-form", "") {
			t.Fatalf("a resolved item's page: %d %s", again.status, again.body)
		}
		twice := c.as("admin").post("/quarantine/acme/"+item+"/link", url.Values{"operation": {"inv-1001"}, "reason": {"again"}})
		if twice.status != http.StatusConflict || !testid(twice.body, "already", "Already linked to operation") {
			t.Fatalf("linking a resolved item: %d %s", twice.status, twice.body)
		}
		if open := b.get("/quarantine"); bytes.Contains(open.body, []byte(`data-item="`+item+`"`)) {
			t.Fatal("a linked item is still listed as open")
		}
		story := c.as("support").get(c.opPath(c.acme))
		if !testid(story.body, "status", "Confirmation pending") ||
			!bytes.Contains(story.body, []byte(`data-testid="event-by">Olu Owner (owner)<`)) ||
			!bytes.Contains(story.body, []byte("Reason: the event&#39;s metadata carries our reference.")) {
			t.Fatalf("the operation's page does not show the link: %s", story.body)
		}
	})
}

// The link stays inside the tenant, needs a reason and the CSRF token, and
// other tenants' and other targets' items answer 404; support and managers
// are refused.
func TestConsole_QuarantineRefusals(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{})
		id := strconv.FormatInt(c.quarantined("acme"), 10)
		theirs := strconv.FormatInt(c.quarantined("globex"), 10)
		orphan := strconv.FormatInt(c.quarantined(""), 10)
		b := c.as("owner")
		link := "/quarantine/acme/" + id + "/link"
		for name, tc := range map[string]struct {
			form        url.Values
			want, field string
		}{
			"OtherTenantsOperation": {url.Values{"operation": {c.globex.ID}, "reason": {"looks like it"}}, "No operation of tenant acme", "link-operation"},
			"OtherTenantsReference": {url.Values{"operation": {"inv-2002"}, "reason": {"looks like it"}}, "No operation of tenant acme", "link-operation"},
			"NoReason":              {url.Values{"operation": {"inv-1001"}}, "Give the reason", "link-reason"},
			"NoOperation":           {url.Values{"reason": {"because"}}, "Name the operation", "link-operation"},
		} {
			r := b.post(link, tc.form)
			if r.status != http.StatusUnprocessableEntity || !testid(r.body, "problem", tc.want) || !testid(r.body, tc.field+"-error", tc.want) {
				t.Errorf("%s: %d, want 422 %q beside %s: %s", name, r.status, tc.want, tc.field, r.body)
			}
			if tc.form.Get("operation") != "" && !bytes.Contains(r.body, []byte(`value="`+tc.form.Get("operation")+`"`)) {
				t.Errorf("%s: what was typed is not kept", name)
			}
		}
		if r := b.do(http.MethodPost, link, url.Values{"operation": {"inv-1001"}, "reason": {"no token"}}); r.status != http.StatusForbidden {
			t.Errorf("without the CSRF token: %d", r.status)
		}
		if q := c.quarantineItem(mustInt(t, id)); q.ResolvedAt != nil {
			t.Fatalf("a refused link resolved the item: %+v", q)
		}
		form := url.Values{"operation": {"inv-1001"}, "reason": {"guess"}}
		for path, who := range map[string]string{
			"/quarantine/acme/" + theirs:                "owner",
			"/quarantine/globex/" + theirs:              "owner",
			"/quarantine/-/" + orphan:                   "owner",
			"/quarantine/acme/" + id:                    "refunds-owner",
			"/quarantine/acme/" + theirs + "/dismiss":   "owner",
			"/quarantine/globex/" + theirs + "/dismiss": "owner",
			"/quarantine/-/" + orphan + "/dismiss":      "owner",
			"/quarantine/acme/" + orphan + "/link":      "owner",
			"/quarantine/acme/" + id + "/link":          "refunds-owner", // owns another target
			"/quarantine/acme/999999/link":              "owner",
			"/quarantine/acme/nonsense/link":            "owner",
		} {
			var r response
			if strings.HasSuffix(path, "/link") || strings.HasSuffix(path, "/dismiss") {
				r = c.as(who).post(path, form)
			} else {
				r = c.as(who).get(path)
			}
			if r.status != http.StatusNotFound {
				t.Errorf("%s by %s: %d, want 404", path, who, r.status)
			}
		}
		for _, who := range []string{"support", "manager"} {
			if r := c.as(who).post(link, form); r.status != http.StatusForbidden {
				t.Errorf("%s: %d, want 403", who, r.status)
			}
			if r := c.as(who).get("/quarantine"); r.status != http.StatusForbidden {
				t.Errorf("%s reads the quarantine: %d", who, r.status)
			}
		}
		if r := c.as("refunds-owner").get("/quarantine"); bytes.Contains(r.body, []byte(`data-item="`+id+`"`)) {
			t.Error("an owner of another target sees the payments item")
		}
		if r := b.get("/quarantine"); bytes.Contains(r.body, []byte(`data-item="`+orphan+`"`)) {
			t.Error("an owner of one tenant sees an unattributed item")
		}
		// Dismissed with a reason, by an admin of the tenant.
		r := c.as("admin").post("/quarantine/acme/"+id+"/dismiss", url.Values{"reason": {"a test event from the dashboard"}})
		if r.status != http.StatusSeeOther {
			t.Fatalf("dismiss: %d %s", r.status, r.body)
		}
		if q := c.quarantineItem(mustInt(t, id)); q.ResolvedAt == nil || q.Resolution != "a test event from the dashboard" ||
			q.ResolvedBy != "demo:ari" || q.OperationID != "" {
			t.Fatalf("dismissed item %+v", q)
		}
		r = b.post("/quarantine/acme/"+id+"/dismiss", url.Values{"reason": {"again"}})
		if r.status != http.StatusConflict || !testid(r.body, "already", "Already dismissed by Ari Admin (admin) at ") {
			t.Fatalf("dismissing twice: %d %s", r.status, r.body)
		}
		if q := c.quarantineItem(mustInt(t, id)); q.ResolvedAs != ledger.QuarantineDismissed || q.ResolvedByRole != "admin" {
			t.Fatalf("dismissed item records %q by %q", q.ResolvedAs, q.ResolvedByRole)
		}
		resolved := b.get("/quarantine?status=resolved")
		if !bytes.Contains(resolved.body, []byte(`data-kind="dismissed"`)) || !testid(resolved.body, "resolution-by", "Ari Admin (admin)") ||
			!testid(resolved.body, "resolution-reason", "a test event from the dashboard") || bytes.Contains(resolved.body, []byte("demo:ari")) {
			t.Fatalf("the resolved tab does not say it was dismissed, by whom: %s", resolved.body)
		}
	})
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// An owner reads a duplicate finding with the target's object ids and the
// operation, sees it on the operation's page, and acknowledges it once
// with a note; the banner goes and the page names who acknowledged it.
func TestConsole_Findings(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{})
		f := c.finding("acme")
		theirs := c.finding("globex")
		item := strconv.FormatInt(f.ID, 10)
		opPath := "/operations/acme/" + f.OperationID
		b := c.as("owner")
		page := b.get("/findings")
		if !testid(page.body, "finding-title", "Duplicate at payments: 2 objects carry") ||
			!testid(page.body, "finding-remote-id", "ch_first") || !bytes.Contains(page.body, []byte("ch_second")) ||
			!testid(page.body, "finding-operation", f.OperationID) || !testid(page.body, "ack-form", "") {
			t.Fatalf("findings page: %s", page.body)
		}
		if bytes.Contains(page.body, []byte(theirs.OperationID)) {
			t.Fatal("another tenant's finding is listed")
		}
		story := c.as("support").get(opPath)
		if !testid(story.body, "open-findings", "") || !testid(story.body, "finding-title", "Duplicate at payments") {
			t.Fatalf("no open-finding banner on the operation's page: %s", story.body)
		}

		ack := "/findings/acme/" + item + "/acknowledge"
		if r := b.post(ack, url.Values{"note": {""}}); r.status != http.StatusUnprocessableEntity || !testid(r.body, "problem", "Add a note") {
			t.Fatalf("no note: %d %s", r.status, r.body)
		}
		if r := b.do(http.MethodPost, ack, url.Values{"note": {"no token"}}); r.status != http.StatusForbidden {
			t.Fatalf("without the CSRF token: %d", r.status)
		}
		for path, who := range map[string]string{
			"/findings/globex/" + strconv.FormatInt(theirs.ID, 10) + "/acknowledge": "owner",
			"/findings/acme/" + strconv.FormatInt(theirs.ID, 10) + "/acknowledge":   "owner",
			ack: "refunds-owner",
		} {
			if r := c.as(who).post(path, url.Values{"note": {"mine?"}}); r.status != http.StatusNotFound {
				t.Errorf("%s by %s: %d, want 404", path, who, r.status)
			}
		}
		if r := c.as("support").post(ack, url.Values{"note": {"support"}}); r.status != http.StatusForbidden {
			t.Errorf("support: %d, want 403", r.status)
		}
		r := b.post(ack, url.Values{"note": {"refunding ch_second at the target"}})
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "/findings?done=acknowledged" {
			t.Fatalf("acknowledge: %d %s", r.status, r.body)
		}
		if r := b.post(ack, url.Values{"note": {"twice"}}); r.status != http.StatusNotFound {
			t.Fatalf("acknowledging twice: %d", r.status)
		}
		done := b.get("/findings?status=resolved")
		if !testid(done.body, "finding-ack", "Acknowledged by Olu Owner") || !bytes.Contains(done.body, []byte("refunding ch_second")) ||
			testid(done.body, "ack-form", "") {
			t.Fatalf("acknowledged view: %s", done.body)
		}
		if open := b.get("/findings"); !testid(open.body, "empty", "No audit finding waits") {
			t.Fatalf("an acknowledged finding is still open: %s", open.body)
		}
		story = c.as("support").get(opPath)
		if testid(story.body, "open-findings", "") || !bytes.Contains(story.body, []byte("Reason: refunding ch_second")) {
			t.Fatalf("operation's page after acknowledging: %s", story.body)
		}
	})
}

// Read-only: the review pages still read, and offer no form.
func TestConsole_ReviewReadOnly(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{ReadOnly: true})
		c.quarantined("acme")
		c.finding("acme")
		b := c.as("owner")
		for _, path := range []string{"/quarantine", "/findings"} {
			r := b.get(path)
			if r.status != http.StatusOK || strings.Contains(string(r.body), `method="post" action="/quarantine`) ||
				strings.Contains(string(r.body), `method="post" action="/findings`) {
				t.Fatalf("%s read-only: %d %s", path, r.status, r.body)
			}
		}
	})
}
