package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"settle/ledger"
	"settle/web"
)

// The escalation page weighs quarantined events that name the operation:
// with nothing from the target in the log, a quarantined webhook carrying
// the operation's reference answers the first question and names its
// object, escaped, for the owner to check — never "the target has shown no
// object" while settle holds one. Another operation's page shows nothing
// of it.
func TestConsole_EscalationWeighsQuarantinedEvents(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{Contracts: noContracts{}})
		ctx := context.Background()
		escalate := func(key string) ledger.Operation {
			op := c.create("acme", key)
			held, err := c.store.Claim(ctx, "acme", op.ID, op.PayloadHash, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			op, err = c.store.Record(ctx, ledger.Outcome{Tenant: "acme", OperationID: op.ID, Fence: held.Fence,
				From: ledger.InFlight, To: ledger.Escalated, Actor: ledger.ActorExecutor,
				Reason: "not sent: the tenant has no account parameter", Evidence: map[string]any{"sent": false}})
			if err != nil {
				t.Fatal(err)
			}
			return op
		}
		op, other := escalate("q-1"), escalate("q-2")
		if _, err := c.store.Quarantine(ctx, ledger.QuarantineItem{Target: "payments", Reason: "the event's tenant does not match",
			EventID: "evt_9", Reference: op.RemoteKey, Tenant: "acme", RemoteID: "ch_seen\u202e", At: time.Now()}); err != nil {
			t.Fatal(err)
		}
		olu := c.as("owner")
		page := olu.get(escPath(op))
		if page.status != http.StatusOK || !testid(page.body, "answer-said-text", "Nothing in the operation") ||
			!testid(page.body, "answer-match-text", "Not known: settle compared no object, but a quarantined event names object") ||
			!strings.Contains(string(page.body), `ch_seen\u202e`) {
			t.Fatalf("escalation page: %d %s", page.status, page.body)
		}
		if strings.Contains(string(page.body), "ch_seen\u202e") || !strings.Contains(string(page.body), "a quarantined event from payments names it") {
			t.Fatal("the provider's right-to-left override reached the page raw")
		}
		if p := olu.get(escPath(other)); !testid(p.body, "answer-match-text", "Not known: the target has shown no object to compare") {
			t.Fatalf("another operation's page: %s", p.body)
		}
	})
}
