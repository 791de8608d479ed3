package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

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
	})
}
