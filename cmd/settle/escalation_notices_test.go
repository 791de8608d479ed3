package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"settle/ledger"
)

// notices lists the tenant's escalation notices given up (and no other
// tenant's); --retry makes them due again, and notices then lists none.
func TestEscalation_NoticesShowRetryGivenUp(t *testing.T) {
	t.Parallel()
	for name, db := range map[string]string{
		"SQLite":   migratedSQLite(t, t.TempDir()),
		"Postgres": schemaURL(t),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := storeAt(t, db, time.Now())
			var es ledger.EscalationStore = s
			op := settled(t, s, "acme", "order-1", ledger.Escalated)
			settled(t, s, "other", "order-2", ledger.Escalated)
			ns, err := es.ClaimEscalationNotices(ctx, 10, time.Minute)
			if err != nil || len(ns) != 2 {
				t.Fatalf("claim = %+v, %v", ns, err)
			}
			for _, n := range ns {
				if err := es.GiveUpEscalationNotice(ctx, n.ID, 503, "endpoint answered 503", time.Now()); err != nil {
					t.Fatal(err)
				}
			}

			code, out, errOut := settleCmd(t, "escalation", "notices", "--tenant", "acme", "--database-url", db)
			if code != 0 || !strings.HasPrefix(out, "given up: 1\n") || !strings.Contains(out, op.ID) ||
				!strings.Contains(out, "endpoint answered 503") || !strings.Contains(out, "settle escalation notices --tenant NAME --retry") {
				t.Fatalf("notices: exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			if strings.Contains(out, "order-2") {
				t.Fatalf("notices lists another tenant's row: %q", out)
			}
			code, out, errOut = settleCmd(t, "escalation", "notices", "--tenant", "acme", "--retry", "--database-url", db)
			if code != 0 || out != "queued 1 given-up escalation notice(s) of tenant acme again\n" {
				t.Fatalf("retry: exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			code, out, _ = settleCmd(t, "escalation", "notices", "--tenant", "acme", "--database-url", db)
			if code != 0 || out != "no escalation notice of tenant acme is given up\n" {
				t.Fatalf("notices after retry: exit %d, %q", code, out)
			}
			if g, err := es.GivenUpEscalationNotices(ctx, "other", 5); err != nil || g.Count != 1 {
				t.Fatalf("other tenant's given up after acme's retry: %+v, %v", g, err)
			}
			later := storeAt(t, db, time.Now().Add(time.Minute))
			ns, err = later.ClaimEscalationNotices(ctx, 10, time.Minute)
			if err != nil || len(ns) != 1 || ns[0].OperationID != op.ID || ns[0].Attempts != 1 {
				t.Fatalf("claim after retry = %+v, %v", ns, err)
			}
			if code, _, errOut = settleCmd(t, "escalation", "list", "--tenant", "acme", "--retry", "--database-url", db); code != 2 {
				t.Fatalf("--retry on list: exit %d, %q", code, errOut)
			}
		})
	}
}
