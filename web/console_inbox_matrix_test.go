package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"settle/ledger"
)

// inboxCases are the authorization matrix's cases for these routes. Each
// POST case makes a fresh item of the operation's tenant, so that every
// permitted person's write succeeds on its own item.
var inboxCases = map[string]matrixCase{
	"GET /quarantine": {url: func(*console, ledger.Operation) string { return "/quarantine" }, ok: http.StatusOK},
	"POST /quarantine/:tenant/:id/link": {url: func(c *console, op ledger.Operation) string {
		return "/quarantine/" + op.Tenant + "/" + strconv.FormatInt(c.quarantined(op.Tenant), 10) + "/link"
	}, ok: http.StatusSeeOther, form: func(*console, ledger.Operation) url.Values {
		return url.Values{"operation": {"inv-1001"}, "reason": {"the event's metadata carries our reference"}}
	}},
	"POST /quarantine/:tenant/:id/dismiss": {url: func(c *console, op ledger.Operation) string {
		return "/quarantine/" + op.Tenant + "/" + strconv.FormatInt(c.quarantined(op.Tenant), 10) + "/dismiss"
	}, ok: http.StatusSeeOther, form: func(*console, ledger.Operation) url.Values {
		return url.Values{"reason": {"a test event from the provider's dashboard"}}
	}},
	"GET /quarantine/:tenant/:id": {url: func(c *console, op ledger.Operation) string {
		return "/quarantine/" + op.Tenant + "/" + strconv.FormatInt(c.quarantined(op.Tenant), 10)
	}, ok: http.StatusOK},
	// The bulk routes name no tenant: each item is checked by the review
	// service, and an item the person may not review is refused in words.
	"GET /quarantine/dismiss": {url: func(c *console, op ledger.Operation) string {
		return "/quarantine/dismiss?scope=selected&item=" + op.Tenant + "/" + strconv.FormatInt(c.quarantined(op.Tenant), 10)
	}, ok: http.StatusOK},
	"POST /quarantine/dismiss": {url: func(*console, ledger.Operation) string { return "/quarantine/dismiss" },
		ok: http.StatusSeeOther, form: func(c *console, op ledger.Operation) url.Values {
			return url.Values{"item": {op.Tenant + "/" + strconv.FormatInt(c.quarantined(op.Tenant), 10)},
				"why": {"test events from the provider's dashboard"}}
		}},
	"GET /findings": {url: func(*console, ledger.Operation) string { return "/findings" }, ok: http.StatusOK},
	"GET /findings/:tenant/:id": {url: func(c *console, op ledger.Operation) string {
		return "/findings/" + op.Tenant + "/" + strconv.FormatInt(c.finding(op.Tenant).ID, 10)
	}, ok: http.StatusOK},
	"POST /findings/:tenant/:id/acknowledge": {url: func(c *console, op ledger.Operation) string {
		return "/findings/" + op.Tenant + "/" + strconv.FormatInt(c.finding(op.Tenant).ID, 10) + "/acknowledge"
	}, ok: http.StatusSeeOther, form: func(*console, ledger.Operation) url.Values {
		return url.Values{"note": {"refunding the extra charge at the target"}}
	}},
}

// quarantined records an event claiming tenant (and naming no known
// operation) on the payments target, and returns its item number.
func (c *console) quarantined(tenant string) int64 {
	c.t.Helper()
	in, ok := c.store.(ledger.InboxStore)
	if !ok {
		c.t.Fatal("store does not implement ledger.InboxStore")
	}
	id, err := in.Quarantine(context.Background(), ledger.QuarantineItem{Target: "payments",
		Reason: "no operation carries the event's reference", EventID: "evt_" + tenant, Reference: "ref-unknown-77",
		Tenant: tenant, RemoteID: "ch_remote_77"})
	if err != nil {
		c.t.Fatal(err)
	}
	return id
}

// finding makes a SUCCEEDED operation of tenant and an open duplicate
// finding about it.
func (c *console) finding(tenant string) ledger.Finding {
	c.t.Helper()
	ctx := context.Background()
	op := c.create(tenant, "inv-settled-"+strconv.FormatInt(time.Now().UnixNano(), 36))
	held, err := c.store.Claim(ctx, tenant, op.ID, op.PayloadHash, time.Minute)
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.store.Record(ctx, ledger.Outcome{Tenant: tenant, OperationID: op.ID, Fence: held.Fence,
		From: ledger.InFlight, To: ledger.Succeeded, RemoteRef: "ch_first", Actor: ledger.ActorExecutor,
		Reason: "created", Evidence: map[string]any{"status": 200}}); err != nil {
		c.t.Fatal(err)
	}
	audit := c.store.(ledger.AuditStore)
	if _, err := audit.RecordFinding(ctx, ledger.Finding{Tenant: tenant, OperationID: op.ID, Kind: ledger.FindingDuplicate,
		RemoteIDs: []string{"ch_first", "ch_second"}, Evidence: []byte(`{"results":2}`), Escalated: true}); err != nil {
		c.t.Fatal(err)
	}
	fs, err := c.store.(ledger.ReviewStore).ListFindings(ctx, ledger.FindingFilter{Tenants: []string{tenant}, OperationID: op.ID})
	if err != nil || len(fs) != 1 {
		c.t.Fatalf("finding: %+v %v", fs, err)
	}
	return fs[0]
}
