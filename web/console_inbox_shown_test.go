package web_test

import (
	"context"
	"html"
	"strconv"
	"strings"
	"testing"
	"time"

	"settle/ledger"
	"settle/web"
)

// What a provider wrote into an event or an object id (an ESC, a newline,
// a right-to-left override, and a NUL as the inbox stores it, already
// quoted) is shown on the quarantine and findings pages as the CLI shows
// it (ledger.ShowText) and marked "escaped"; plain values are not marked.
func TestConsole_ReviewPagesMarkEscapedProviderText(t *testing.T) {
	t.Parallel()
	hostile := map[string]string{
		"event id":  "evt_\x1b[31mred",
		"reference": "ref\nFAKE: linked",
		"remote id": ledger.PlainText("ch_\x00nul", ledger.MaxProviderText), // as reconciler.Inbox stores it
	}
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{})
		ctx := context.Background()
		id, err := c.store.(ledger.InboxStore).Quarantine(ctx, ledger.QuarantineItem{Target: "payments",
			Reason: "no operation carries the event's reference", EventID: hostile["event id"],
			Reference: hostile["reference"], Tenant: "acme", RemoteID: hostile["remote id"]})
		if err != nil {
			t.Fatal(err)
		}
		list := c.as("admin").get("/quarantine")
		page := c.as("admin").get("/quarantine/acme/" + strconv.FormatInt(id, 10))
		for field, id := range map[string]string{"event id": "item-event-id", "reference": "item-reference",
			"remote id": "item-remote-id"} {
			want, _ := ledger.ShowText(hostile[field])
			if !testid(page.body, id, html.EscapeString(want)+"<") || !testid(page.body, id+"-escaped", "escaped") {
				t.Errorf("%s %q is not shown as %s on the item's page, marked", field, hostile[field], want)
			}
			if id != "item-reference" && (!testid(list.body, id, html.EscapeString(want)+"<") || !testid(list.body, id+"-escaped", "escaped")) {
				t.Errorf("%s %q is not shown as %s on the list, marked", field, hostile[field], want)
			}
		}
		if !testid(page.body, "item-claimed", "acme<") || testid(page.body, "item-claimed-escaped", "") {
			t.Errorf("a plain tenant is not shown plain, unmarked")
		}
		for _, p := range []response{list, page} {
			if s := string(p.body); strings.ContainsAny(s, "\x1b\x00") || strings.Contains(s, "ref\nFAKE") || t.Failed() {
				t.Fatalf("the quarantine page:\n%s", s)
			}
		}

		op := c.create("acme", "inv-marked")
		held, err := c.store.Claim(ctx, "acme", op.ID, op.PayloadHash, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.store.Record(ctx, ledger.Outcome{Tenant: "acme", OperationID: op.ID, Fence: held.Fence,
			From: ledger.InFlight, To: ledger.Succeeded, RemoteRef: "ch_plain", Actor: ledger.ActorExecutor,
			Reason: "created", Evidence: map[string]any{"status": 200}}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.store.(ledger.AuditStore).RecordFinding(ctx, ledger.Finding{Tenant: "acme", OperationID: op.ID,
			Kind: ledger.FindingDuplicate, RemoteIDs: []string{"ch_plain", "ch_\u202egnp.exe"}, Evidence: []byte(`{"results":2}`)}); err != nil {
			t.Fatal(err)
		}
		findings := c.as("admin").get("/findings")
		want, _ := ledger.ShowText("ch_\u202egnp.exe")
		if !testid(findings.body, "finding-remote-id", "ch_plain<") ||
			!strings.Contains(string(findings.body), `data-testid="finding-remote-id">`+html.EscapeString(want)+`</span> <span class="tag" data-testid="finding-remote-id-escaped"`) ||
			strings.Count(string(findings.body), `data-testid="finding-remote-id-escaped"`) != 1 ||
			strings.ContainsRune(string(findings.body), '\u202e') {
			t.Errorf("findings page: the override is not shown as %s, marked once:\n%s", want, findings.body)
		}
	})
}
