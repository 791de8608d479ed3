package web_test

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"settle/web"
)

// Every role reads the contracts: the listing names each target with its
// classes, and a contract's page says in words what settle may do, its
// window, lookup, consistency, status table, owner and documentation.
func TestConsoleTargets_Pages(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{})
		for _, who := range []string{"support", "owner", "manager", "admin"} {
			b := c.as(who)
			list := b.get("/targets")
			if list.status != http.StatusOK || bytes.Count(list.body, []byte(`data-testid="target-row"`)) != 2 ||
				!testid(list.body, "target-link", "payments") || !testid(list.body, "target-classes", "A, B, C") {
				t.Fatalf("%s: targets: %d %s", who, list.status, list.body)
			}
			if !bytes.Contains(list.body, []byte(`href="/targets" aria-current="page"`)) {
				t.Fatalf("%s: the Targets nav entry is not current", who)
			}
		}
		p := c.as("support").get("/targets/payments")
		for _, want := range []struct{ id, text string }{
			{"target-name", "payments"},
			{"class-A", "<strong>Class A.</strong> Same-key replay"},
			{"class-B", "<strong>Class B.</strong> Lookup"},
			{"class-C", "<strong>Class C.</strong> Conditional update"},
			{"doc-link", "https://docs.example.com/api/v1"},
			{"doc-checked", "2026-11-01"},
			{"fact-owner", "Payments team"},
			{"fact-escalation-contact", "payments-oncall@example.com"},
			{"fact-escalation-deadline", "operations still unresolved 1 day after registration"},
			{"fact-idempotency-header", "Idempotency-Key"},
			{"fact-idempotency-scope", "account"},
			{"fact-retention", "the target remembers a key for 1 day"},
			{"fact-replay-margin", "10 s kept free"},
			{"fact-replay-until", "sent only until 23 h 59 min 35 s after the first claim"},
			{"fact-lookup", "GET /v1/charges/search?query=metadata[&#39;settle_ref&#39;]:&#39;{reference}&#39;"},
			{"fact-replayed-header", "Idempotent-Replayed: true marks"},
			{"fact-credential", "the Authorization header carries Bearer and the secret; the secret is read at start-up from the environment variable SETTLE_PAYMENTS_API_KEY"},
			{"fact-encoding", "form (application/x-www-form-urlencoded"},
			{"fact-headers", "Payments-Account: {tenant.account}; Payments-Version: 2026-11-01"},
			{"fact-body-fields", "transfer.destination = {tenant.destination}"},
			{"fact-tenant-params", "account, destination: set for each tenant"},
			{"fact-match", "amount (numeric), currency (case-insensitive), metadata.settle_ref (exact), metadata.settle_tenant (exact)"},
			{"fact-object-status", "status: succeeded → succeeded, paid → succeeded, pending → pending, failed → failed; any other value counts as pending"},
			{"fact-consistency", "not documented: &#34;not found&#34; alone never counts"},
			{"fact-propagation", "a committed write is visible to lookups within 30 s"},
			{"fact-conditional", "supported through the If-Match header"},
			{"fact-late-requests", "the target documents that a request arriving after"},
			{"outcome-status", "201"},
			{"outcome-outcome", "succeeded"},
		} {
			if !testid(p.body, want.id, want.text) {
				t.Errorf("payments lacks %s %q", want.id, want.text)
			}
		}
		if n := bytes.Count(p.body, []byte(`data-testid="outcome-row"`)); n != 5 {
			t.Errorf("status table: %d rows, want 5", n)
		}
		if testid(p.body, "doc-stale", "") || testid(p.body, "class-D", "") {
			t.Error("payments is flagged stale or class D")
		}
		bare := c.as("support").get("/targets/provisioning")
		if !testid(bare.body, "class-D", "<strong>Class D.</strong> None") || !testid(bare.body, "fact-lookup", "none") {
			t.Errorf("provisioning: %s", bare.body)
		}
		if r := c.as("support").get("/targets/nowhere"); r.status != http.StatusNotFound || !testid(r.body, "error-heading", "Not found") {
			t.Fatalf("unknown target: %d", r.status)
		}
	})
}

// A documentation check more than 180 days old is flagged on both pages.
func TestConsoleTargets_StaleDocumentation(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		later := time.Date(2027, 6, 1, 0, 0, 0, 0, time.UTC) // 212 days after payments' check
		c := newConsole(t, open(t), web.Config{Now: func() time.Time { return later }})
		b := c.as("support")
		if r := b.get("/targets"); !testid(r.body, "target-stale", "2026-11-01") ||
			bytes.Count(r.body, []byte(`data-testid="target-stale"`)) != 2 {
			t.Fatalf("listing: %s", r.body)
		}
		if r := b.get("/targets/payments"); !testid(r.body, "doc-stale", "2026-11-01 (212 days ago) — more than 180 days ago") {
			t.Fatalf("detail: %s", r.body)
		}
	})
}

// An admin of some tenants picks one; another tenant is refused in words.
func TestConsoleAdmin_TenantPicker(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{})
		b := c.as("admin")
		if r := b.get("/admin?tenant=acme"); r.status != http.StatusSeeOther || r.header.Get("Location") != "/admin/tenants/acme" {
			t.Fatalf("own tenant: %d %v", r.status, r.header)
		}
		if r := b.get("/admin?tenant=globex"); r.status != http.StatusOK || !testid(r.body, "admin-problem", "You cannot manage tenant") {
			t.Fatalf("other tenant: %d %s", r.status, r.body)
		}
	})
}
