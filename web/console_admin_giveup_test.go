package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"settle/ledger"
	"settle/web"
)

// The tenant's admin page shows how many of its notifications were given
// up and the latest of them, never another tenant's.
func TestConsoleAdmin_CallbackGivenUp(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{})
		ctx := context.Background()
		c.setCallback("acme")
		c.setCallback("other")
		b := c.as("admin")
		if page := b.get("/admin/tenants/acme"); strings.Contains(string(page.body), "callback-given-up") {
			t.Fatalf("given-up notifications shown before any: %s", page.body)
		}
		op := c.escalated("acme")
		c.escalated("other")
		ns, err := c.callbacks().ClaimNotifications(ctx, 10, time.Minute)
		if err != nil || len(ns) != 2 {
			t.Fatalf("claim = %+v, %v", ns, err)
		}
		for _, n := range ns {
			if err := c.callbacks().GiveUpNotification(ctx, n.ID, 503, "endpoint answered 503", time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		page := b.get("/admin/tenants/acme")
		body := string(page.body)
		if !testid(page.body, "callback-given-up-count", "1 notification(s) given up") ||
			strings.Count(body, `data-testid="callback-given-up-row"`) != 1 || !strings.Contains(body, op.ID) ||
			!strings.Contains(body, "endpoint answered 503") || !strings.Contains(body, ">ESCALATED<") {
			t.Fatalf("tenant page: %d %s", page.status, body)
		}
		if !strings.Contains(body, `action="/admin/tenants/acme/callback/retry"`) {
			t.Fatalf("no retry form: %s", body)
		}

		// Without the CSRF token nothing is retried.
		if r := b.do(http.MethodPost, "/admin/tenants/acme/callback/retry", url.Values{}); r.status != http.StatusForbidden {
			t.Fatalf("retry without CSRF: %d", r.status)
		}
		if g, err := c.callbacks().GivenUpNotifications(ctx, "acme", 1); err != nil || g.Count != 1 {
			t.Fatalf("after a refused retry: %+v, %v", g, err)
		}
		r := b.do(http.MethodPost, "/admin/tenants/acme/callback/retry", url.Values{"_csrf": {b.token()}})
		if r.status != http.StatusSeeOther {
			t.Fatalf("retry: %d %s", r.status, r.body)
		}
		wantActor(t, findAction(t, c.actions("acme"), ledger.ActionCallbackRetry, "acme"), r)
		if page := b.get("/admin/tenants/acme"); strings.Contains(string(page.body), "callback-given-up") {
			t.Fatalf("given-up notifications still shown after the retry: %s", page.body)
		}
		// Only acme's notification is due again; other's stays given up.
		again, err := c.callbacks().ClaimNotifications(ctx, 10, time.Minute)
		if err != nil || len(again) != 1 || again[0].OperationID != op.ID || again[0].Attempts != 1 {
			t.Fatalf("claimed after the retry = %+v, %v", again, err)
		}
		if g, err := c.callbacks().GivenUpNotifications(ctx, "other", 1); err != nil || g.Count != 1 {
			t.Fatalf("other tenant's given-up: %+v, %v", g, err)
		}
	})
}
