package main

import (
	"strings"
	"testing"
)

// settle token create refuses a tenant nobody created, with the message
// the console shows; settle tenant create (recorded) makes it known, and
// the token list then shows the token's name and that it was never used.
func TestTenant_CreateBeforeToken(t *testing.T) {
	t.Parallel()
	for name, db := range tenantStores(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := settleCmd(t, "token", "create", "--name", "billing", "--tenant", "acmee", "--database-url", db)
			if code == 0 || out != "" || !strings.Contains(errOut, "settle knows no tenant “acmee”") {
				t.Fatalf("token for an unknown tenant: exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			if code, _, errOut := settleCmd(t, "token", "create", "--tenant", "acme", "--database-url", db); code != 2 ||
				!strings.Contains(errOut, "--name is required") {
				t.Fatalf("token without a name: exit %d, stderr %q", code, errOut)
			}
			code, out, errOut = settleCmd(t, "tenant", "create", "--tenant", "acme", "--by", "ada", "--database-url", db)
			if code != 0 || out != "created tenant acme\n" {
				t.Fatalf("tenant create: exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			if code, _, errOut := settleCmd(t, "tenant", "create", "--tenant", "acme", "--database-url", db); code == 0 ||
				!strings.Contains(errOut, "already exists") {
				t.Fatalf("tenant create twice: exit %d, stderr %q", code, errOut)
			}
			if code, out, _ := settleCmd(t, "tenant", "list", "--database-url", db); code != 0 || !strings.Contains(out, "\nacme ") {
				t.Fatalf("tenant list: exit %d, %q", code, out)
			}
			code, out, errOut = settleCmd(t, "token", "create", "--name", "billing service", "--tenant", "acme", "--database-url", db)
			if code != 0 || !strings.HasPrefix(out, "stl_") {
				t.Fatalf("token for a known tenant: exit %d, stderr %q", code, errOut)
			}
			if code, _, errOut := settleCmd(t, "token", "create", "--name", "bulk", "--tenant", "acme", "--rate=-1",
				"--database-url", db); code != 2 || !strings.Contains(errOut, "--rate and --burst are whole numbers") {
				t.Fatalf("token with a negative rate: exit %d, stderr %q", code, errOut)
			}
			if code, out, errOut := settleCmd(t, "token", "create", "--name", "bulk import", "--tenant", "acme", "--rate", "7",
				"--burst", "9", "--database-url", db); code != 0 || !strings.HasPrefix(out, "stl_") {
				t.Fatalf("token with its own rate: exit %d, stderr %q", code, errOut)
			}
			code, out, _ = settleCmd(t, "token", "list", "--tenant", "acme", "--database-url", db)
			if code != 0 || !strings.Contains(out, "billing service") || !strings.Contains(out, "never") ||
				!strings.Contains(out, "LAST USED") || !strings.Contains(out, "7/s, burst 9") || !strings.Contains(out, "default") {
				t.Fatalf("token list: exit %d, %q", code, out)
			}
			if got := paramActionsOf(t, db, "acme", "tenant.create"); len(got) != 1 || got[0] != "acme | cli:ada | admin" {
				t.Fatalf("recorded: %q", got)
			}
		})
	}
}

// paramActionsOf returns the tenant's actions of kind, newest first, as
// "object | by | role".
func paramActionsOf(t *testing.T, db, tenant, kind string) []string {
	t.Helper()
	var out []string
	for _, a := range tenantActions(t, db, tenant) {
		if string(a.Kind) == kind {
			out = append(out, strings.Join([]string{a.Object, a.Subject, a.Role}, " | "))
		}
	}
	return out
}
