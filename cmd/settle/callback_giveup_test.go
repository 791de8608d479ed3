package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"settle/ledger"
)

// show lists the tenant's given-up notifications (and no other tenant's),
// without payloads; retry makes them due again, and show then lists none.
func TestCallback_ShowRetryGivenUp(t *testing.T) {
	t.Parallel()
	for name, db := range map[string]string{
		"SQLite":   migratedSQLite(t, t.TempDir()),
		"Postgres": schemaURL(t),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			const url = "https://hooks.example.com/settle?k=1"
			for _, tenant := range []string{"acme", "other"} {
				if code, _, errOut := settleCmd(t, "callback", "set", "--tenant", tenant, "--url", url, "--database-url", db); code != 0 {
					t.Fatalf("set: %d %s", code, errOut)
				}
			}
			ctx := context.Background()
			s := storeAt(t, db, time.Now())
			var cs ledger.CallbackStore = s
			op := settled(t, s, "acme", "order-1", ledger.Succeeded)
			settled(t, s, "other", "order-2", ledger.Succeeded)
			ns, err := cs.ClaimNotifications(ctx, 10, time.Minute)
			if err != nil || len(ns) != 2 {
				t.Fatalf("claim = %+v, %v", ns, err)
			}
			for _, n := range ns {
				if err := cs.GiveUpNotification(ctx, n.ID, 503, "endpoint answered 503", time.Now()); err != nil {
					t.Fatal(err)
				}
			}

			code, out, errOut := settleCmd(t, "callback", "show", "--tenant", "acme", "--database-url", db)
			if code != 0 || !strings.HasPrefix(out, url+"\nlast attempt: ") || !strings.Contains(out, ", answered 503: not delivered\n") ||
				!strings.Contains(out, "\nfailed attempts since: 1\nwaiting to be delivered: 0\ngiven up: 1\n") || !strings.Contains(out, op.ID) ||
				!strings.Contains(out, "SUCCEEDED") || !strings.Contains(out, "endpoint answered 503") {
				t.Fatalf("show: exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			if strings.Contains(out, "PAYLOAD-SECRET") || strings.Contains(out, "order-2") {
				t.Fatalf("show carries a payload or another tenant's row: %q", out)
			}

			code, out, errOut = settleCmd(t, "callback", "retry", "--tenant", "acme", "--database-url", db)
			if code != 0 || out != "queued 1 given-up notification(s) of tenant acme again\n" {
				t.Fatalf("retry: exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			if code, out, _ = settleCmd(t, "callback", "show", "--tenant", "acme", "--database-url", db); code != 0 ||
				!strings.HasSuffix(out, "\nwaiting to be delivered: 1\n") || strings.Contains(out, "given up") {
				t.Fatalf("show after retry: exit %d, %q", code, out)
			}
			if g, err := cs.GivenUpNotifications(ctx, "other", 5); err != nil || g.Count != 1 {
				t.Fatalf("other tenant's given up after acme's retry: %+v, %v", g, err)
			}
			// Due at the retry's time: a store whose clock is past it claims it.
			later := storeAt(t, db, time.Now().Add(time.Minute))
			ns, err = later.ClaimNotifications(ctx, 10, time.Minute)
			if err != nil || len(ns) != 1 || ns[0].OperationID != op.ID || ns[0].Attempts != 1 {
				t.Fatalf("claim after retry = %+v, %v", ns, err)
			}
			if code, _, errOut = settleCmd(t, "callback", "retry", "--database-url", db); code != 2 || !strings.Contains(errOut, "--tenant is required") {
				t.Fatalf("retry without tenant: exit %d, %q", code, errOut)
			}
		})
	}
}

// A bound below one attempt is a usage error, before any store is opened.
func TestServe_CallbackMaxAttemptsChecked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	code, _, errOut := settleCmd(t, "serve", "--database-url", "sqlite:"+dir+"/settle.db", "--callback-max-attempts", "0")
	if code != 2 || !strings.Contains(errOut, "--callback-max-attempts must be at least 1") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "settle.db")); !os.IsNotExist(err) {
		t.Fatalf("a store was created: %v", err)
	}
}
