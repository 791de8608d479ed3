package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"settle/ledger"
)

// escalationCases cover the escalation queue's routes. Each POST prepares
// its own escalated operation (and proposal) in the tenant under test, so
// that the permitted owner's write succeeds.
var escalationCases = map[string]matrixCase{
	"GET /escalations":           {url: func(*console, ledger.Operation) string { return "/escalations" }, ok: http.StatusOK},
	"GET /escalations/proposals": {url: func(*console, ledger.Operation) string { return "/escalations/proposals" }, ok: http.StatusOK},
	"GET /escalations/:tenant/:id": {url: func(c *console, op ledger.Operation) string {
		return escPath(c.escalated(op.Tenant))
	}, ok: http.StatusOK},
	"POST /escalations/:tenant/:id/propose": {ok: http.StatusSeeOther},
	"POST /escalations/:tenant/:id/approve": {ok: http.StatusSeeOther},
	"POST /escalations/:tenant/:id/reject":  {ok: http.StatusSeeOther},
	// Not tenanted: each item is checked by the service; a page lists what
	// was done and what was refused (another tenant's items, here).
	"POST /escalations/bulk/review":         {ok: http.StatusOK},
	"POST /escalations/bulk/propose":        {ok: http.StatusOK},
	"POST /escalations/bulk/approve/review": {ok: http.StatusOK},
	"POST /escalations/bulk/approve":        {ok: http.StatusOK},
}

// escalationPosts prepare each escalation write: its own escalated
// operation (and a third owner's proposal) in the tenant under test.
var escalationPosts = map[string]postCase{
	"POST /escalations/:tenant/:id/propose": func(c *console, op ledger.Operation) (string, url.Values) {
		return escPath(c.escalated(op.Tenant)) + "/propose",
			url.Values{"kind": {"confirm_not_applied"}, "reason": {"the target's dashboard shows no charge"},
				"despite_evidence": {"yes"}} // the escalation's evidence shows an object

	},
	"POST /escalations/:tenant/:id/approve": func(c *console, op ledger.Operation) (string, url.Values) {
		esc, r := c.proposed(op.Tenant)
		return escPath(esc) + "/approve", url.Values{"proposal": {fmt.Sprint(r.ID)},
			"despite_evidence": {"yes"}} // the escalation's evidence shows an object
	},
	"POST /escalations/:tenant/:id/reject": func(c *console, op ledger.Operation) (string, url.Values) {
		esc, r := c.proposed(op.Tenant)
		return escPath(esc) + "/reject", url.Values{"proposal": {fmt.Sprint(r.ID)}, "reason": {"no evidence yet"}}
	},
	// Each bulk write names one operation of acme and one of op's tenant.
	"POST /escalations/bulk/review": func(c *console, op ledger.Operation) (string, url.Values) {
		return "/escalations/bulk/review", url.Values{"op": {opRef(c.escalated("acme")), opRef(c.escalated(op.Tenant))},
			"kind": {"confirm_not_applied"}, "why": {"the target's dashboard shows no charge"}}
	},
	"POST /escalations/bulk/propose": func(c *console, op ledger.Operation) (string, url.Values) {
		return "/escalations/bulk/propose", url.Values{"item": {opRef(c.escalated("acme")), opRef(c.escalated(op.Tenant))},
			"kind": {"confirm_not_applied"}, "why": {"the target's dashboard shows no charge"}}
	},
	"POST /escalations/bulk/approve/review": func(c *console, op ledger.Operation) (string, url.Values) {
		_, a := c.proposed("acme")
		_, o := c.proposed(op.Tenant)
		return "/escalations/bulk/approve/review", url.Values{"proposal": {proposalRef(a), proposalRef(o)}}
	},
	"POST /escalations/bulk/approve": func(c *console, op ledger.Operation) (string, url.Values) {
		_, a := c.proposed("acme")
		_, o := c.proposed(op.Tenant)
		return "/escalations/bulk/approve", url.Values{"item": {proposalRef(a), proposalRef(o)}}
	},
}

func opRef(op ledger.Operation) string { return op.Tenant + "/" + op.ID }

func proposalRef(r ledger.Resolution) string { return r.Tenant + "/" + fmt.Sprint(r.ID) }

func escPath(op ledger.Operation) string { return "/escalations/" + op.Tenant + "/" + op.ID }

var escSeq atomic.Int64

// escalated registers an operation of tenant for target payments, claims
// it and escalates it, as the executor does with an answer it cannot use.
func (c *console) escalated(tenant string) ledger.Operation {
	c.t.Helper()
	return c.escalatedWith(tenant, "the remote object does not match the approved payload",
		map[string]any{"status": 200, "remote_id": "ch_x", "mismatched_fields": []string{"amount"}})
}

// escalatedUnanswered is an escalated operation whose send had no answer:
// no evidence contradicts any proposal, so it can be proposed in bulk.
func (c *console) escalatedUnanswered(tenant string) ledger.Operation {
	c.t.Helper()
	return c.escalatedWith(tenant, "the deadline passed with the outcome unknown", map[string]any{"error": "timeout"})
}

func (c *console) escalatedWith(tenant, reason string, evidence map[string]any) ledger.Operation {
	c.t.Helper()
	ctx := context.Background()
	op := c.create(tenant, fmt.Sprintf("esc-%d", escSeq.Add(1)))
	held, err := c.store.Claim(ctx, tenant, op.ID, op.PayloadHash, time.Minute)
	if err != nil {
		c.t.Fatal(err)
	}
	op, err = c.store.Record(ctx, ledger.Outcome{Tenant: tenant, OperationID: op.ID, Fence: held.Fence,
		From: ledger.InFlight, To: ledger.Escalated, Actor: ledger.ActorExecutor,
		Reason: reason, Evidence: evidence})
	if err != nil {
		c.t.Fatal(err)
	}
	return op
}

// proposed is an escalated operation of tenant with an open proposal by
// a third owner, Zed, whom no test principal is.
func (c *console) proposed(tenant string) (ledger.Operation, ledger.Resolution) {
	c.t.Helper()
	op := c.escalated(tenant)
	zed := ledger.NewContextWithActor(context.Background(), ledger.Actor{Subject: "demo:zed", Name: "Zed", Role: "owner"})
	r, err := c.store.Propose(zed, ledger.Resolution{Tenant: tenant, OperationID: op.ID,
		Kind: ledger.KindConfirmNotApplied, To: ledger.FailedTerminal, Reason: "the provider says it never arrived"})
	if err != nil {
		c.t.Fatal(err)
	}
	return op, r
}
