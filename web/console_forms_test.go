package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"settle/ledger"
	"settle/web"
)

// Every form of the console answers a validation error
// with its own page again (422): the error beside the field, which is
// marked aria-invalid and names it by aria-describedby, and what was
// typed kept — never the dead-end "That could not be used" page at a URL
// whose GET is 405. Both stores.
func TestConsole_FormsRerender(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{Contracts: noContracts{}})
		op := c.escalated("acme")
		f := c.finding("acme")
		olu, bea := c.as("owner"), c.as("owner-b")
		// An open proposal by Olu, for Bea to reject without a reason.
		if r := olu.post(escPath(op)+"/propose", url.Values{"kind": {"confirm_succeeded"}, "remote_ref": {"ch_9"},
			"reason": {"seen at the provider"}}); r.status != http.StatusSeeOther {
			t.Fatalf("propose: %d %s", r.status, r.body)
		}
		other := c.escalated("acme")
		item := "/quarantine/acme/" + strconv.FormatInt(c.quarantined("acme"), 10)
		for _, fc := range []struct {
			name, who, path string
			form            url.Values
			field, kept     string // the invalid field's id, and a typed value the page keeps
		}{
			{"token without a name", "admin", "/admin/tenants/acme/tokens", url.Values{"name": {"  "}}, "token-name", ""},
			{"callback to plain http", "admin", "/admin/tenants/acme/callback", url.Values{"url": {"http://hooks.example.com/acme"}},
				"callback-url", "http://hooks.example.com/acme"},
			{"unknown time zone", "support", "/settings", url.Values{"zone": {"Mars/Olympus"}}, "zone", "Mars/Olympus"},
			{"confirm succeeded without an object id", "owner", escPath(other) + "/propose",
				url.Values{"kind": {"confirm_succeeded"}, "reason": {"the dashboard says so"}}, "remote_ref", "the dashboard says so"},
			{"reject without a reason", "owner-b", escPath(op) + "/reject", url.Values{"proposal": {openProposal(t, c, op)}, "reason": {" "}},
				"reject-reason", ""},
			{"acknowledge without a note", "owner", "/findings/acme/" + strconv.FormatInt(f.ID, 10) + "/acknowledge",
				url.Values{"note": {""}}, "", ""},
			{"quarantine link without a reason", "owner", item + "/link", url.Values{"operation": {"inv-1001"}}, "link-reason", "inv-1001"},
			{"quarantine link to nothing", "owner", item + "/link", url.Values{"operation": {"inv-none"}, "reason": {"it says so"}},
				"link-operation", "it says so"},
			{"quarantine dismissal without a reason", "owner", item + "/dismiss", url.Values{"reason": {" "}}, "dismiss-reason", ""},
			{"bulk dismissal without a reason", "owner", "/quarantine/dismiss", url.Values{"item": {strings.TrimPrefix(item, "/quarantine/")}},
				"bulk-why", ""},
			{"bulk proposal without a reason", "owner", "/escalations/bulk/review",
				url.Values{"op": {"acme/" + other.ID}, "scope": {"selected"}, "kind": {"confirm_not_applied"}}, "", ""},
		} {
			b := map[string]*browser{"owner": olu, "owner-b": bea}[fc.who]
			if b == nil {
				b = c.as(fc.who)
			}
			r := b.post(fc.path, fc.form)
			body := string(r.body)
			if r.status != http.StatusUnprocessableEntity || strings.Contains(body, "That could not be used") {
				t.Errorf("%s: %d, a dead end: %.1500s", fc.name, r.status, body)
				continue
			}
			if fc.field != "" && (!strings.Contains(body, `aria-invalid="true"`) ||
				!strings.Contains(body, `aria-describedby="`+fc.field)) {
				t.Errorf("%s: the field %s is not marked invalid with its error: %.3000s", fc.name, fc.field, body)
			}
			if fc.kept != "" && !strings.Contains(body, `value="`+fc.kept+`"`) {
				t.Errorf("%s: %q not kept: %.3000s", fc.name, fc.kept, body)
			}
		}
	})
}

// openProposal is the number of op's open proposal.
func openProposal(t *testing.T, c *console, op ledger.Operation) string {
	t.Helper()
	props, err := c.store.OpenResolutions(context.Background(), []string{op.Tenant}, false)
	for _, p := range props {
		if p.OperationID == op.ID {
			return strconv.FormatInt(p.ID, 10)
		}
	}
	t.Fatalf("no open proposal on %s: %+v %v", op.ID, props, err)
	return ""
}
