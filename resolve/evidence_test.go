package resolve_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/storetest"
	"settle/resolve"
	"settle/target"
)

// contracts is a Contracts of parsed YAML.
type contracts struct{ set *target.Set }

func (c contracts) Get(name string) (*target.Contract, bool) { return c.set.Get(name) }

// transfersYAML is a class B target like the demo's transfers: a lookup
// by reference, eventually consistent, and late requests not documented
// as rejected — so absence is never proven and supersede never succeeds.
const transfersYAML = `targets:
  - name: transfers
    owner: {team: Treasury, escalation_contact: treasury@example.com}
    documentation: {url: "https://docs.example.com/transfers", checked: 2026-11-01}
    base_url: http://127.0.0.1:1/
    deadline: 1h
    create: {method: POST, path: /transfers}
    reference_field: reference
    lookup: {method: GET, path: "/transfers?reference={reference}", results_field: data, propagation_limit: 2m}
    late_requests_rejected: false
    response: {id_field: id, match: [amount, reference]}
`

func newRigWith(t *testing.T, h ledgertest.Harness, yaml string) *rig {
	r := newRig(t, h)
	set, err := target.Parse("test", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	r.svc = resolve.New(r.store, contracts{set}, nil, r.clk.Now)
	return r
}

// escalatedWith escalates an operation of acme at target after the
// target spoke with evidence (an answer settle recorded in the log).
func (r *rig) escalatedWith(target string, evidence map[string]any) ledger.Operation {
	r.t.Helper()
	ctx := context.Background()
	r.n++
	at := r.clk.Now().Add(time.Hour)
	op, _, err := r.store.Create(ctx, ledger.NewOperation{Tenant: "acme", Type: "charge", Target: target,
		IntentRef: "inv-ev-" + string(rune('a'+r.n)), Payload: []byte(`{"amount":1}`), Deadline: &at})
	if err != nil {
		r.t.Fatal(err)
	}
	held, err := r.store.Claim(ctx, "acme", op.ID, op.PayloadHash, time.Minute)
	if err != nil {
		r.t.Fatal(err)
	}
	op, err = r.store.Record(ctx, ledger.Outcome{Tenant: "acme", OperationID: op.ID, Fence: held.Fence,
		From: ledger.InFlight, To: ledger.Escalated, Actor: ledger.ActorReconciler,
		Reason: "the remote object exists but is not complete yet", Evidence: evidence})
	if err != nil {
		r.t.Fatal(err)
	}
	r.clk.Advance(time.Second)
	return op
}

// The decision page's evidence: the case — an escalated
// operation whose lookup saw a pending object, then a quarantined webhook
// naming only object ch_… (no settle reference), which an owner links.
// Before, the match answer said "the target has shown no object" while
// settle held two; now every piece is in the case, newest first, the
// latest lookup among them, and each object is offered as a choice.
func TestCase_EvidenceAfterLink(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		t.Parallel()
		r := newRig(t, h)
		op := r.escalatedWith("legacy-billing", map[string]any{"via": "lookup", "status": 200, "results": 1,
			"remote_id": "ch_pending", "object_status": "pending"})
		ctx := context.Background()
		sc := resolve.TenantScope("acme")
		inbox := r.store.(ledger.InboxStore)
		qid, err := inbox.Quarantine(ctx, ledger.QuarantineItem{Target: "legacy-billing", Reason: "the event carries no settle reference",
			EventID: "evt_42", Tenant: "acme", RemoteID: "ch_legacy", At: r.clk.Now()})
		if err != nil {
			t.Fatal(err)
		}
		k, err := r.svc.Case(ctx, sc, "acme", op.ID)
		if err != nil {
			t.Fatal(err)
		}
		if k.Match.Shown == nil || k.Match.RemoteID != "ch_pending" || k.Lookup == nil || k.Lookup.RemoteID != "ch_pending" ||
			k.Lookup.Status != "pending" || k.Lookup.Results != 1 || !k.Lookup.Verified {
			t.Fatalf("a lookup's pending object is not shown: match %+v lookup %+v", k.Match, k.Lookup)
		}
		if len(k.Evidence) != 1 {
			t.Fatalf("an unlinked event without the reference counted as evidence: %+v", k.Evidence)
		}

		rs := r.store.(ledger.ReviewStore)
		if err := rs.LinkQuarantine(olu, "acme", qid, op.ID, "the provider's dashboard shows this charge for the order"); err != nil {
			t.Fatal(err)
		}
		k, err = r.svc.Case(ctx, sc, "acme", op.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(k.Evidence) != 2 || k.Evidence[0].Source != resolve.SourceQuarantine || k.Evidence[0].RemoteID != "ch_legacy" ||
			k.Evidence[0].EventID != "evt_42" || k.Evidence[0].Reviewed == "" || k.Evidence[1].Source != resolve.SourceLookup {
			t.Fatalf("evidence after the link: %+v", k.Evidence)
		}
		if k.Match.Shown == nil || k.Match.RemoteID != "ch_legacy" {
			t.Errorf("the match question ignores the linked event: %+v", k.Match)
		}
		if len(k.Suggestions) != 2 || k.Suggestions[0].RemoteRef != "ch_legacy" || k.Suggestions[1].RemoteRef != "ch_pending" {
			t.Fatalf("suggestions: %+v", k.Suggestions)
		}
		if got := resolve.SuggestionLabel(k.Suggestions[0]); got != "Confirm succeeded with ch_legacy from the quarantined webhook event evt_42 of 1 Mar 09:00 UTC" {
			t.Errorf("suggestion label: %q", got)
		}
	})
}

// A proposal the evidence contradicts ("not applied" while an event shows
// an object) is refused until its proposer confirms it, and its approval
// until the approver does; the log says it was weighed. The CLI calls the
// same service, so it is held to the same.
func TestPropose_ContradictionMustBeConfirmed(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		t.Parallel()
		r := newRig(t, h)
		op := r.escalatedWith("legacy-billing", map[string]any{"via": "webhook", "event_id": "evt_7", "remote_id": "ch_7"})
		sc := resolve.TenantScope("acme")
		no := resolve.Proposal{Kind: ledger.KindConfirmNotApplied, Reason: "the customer says it failed"}
		_, err := r.svc.Propose(olu, sc, "acme", op.ID, no)
		if ledger.ErrorCode(err) != ledger.EInvalid || resolve.FieldOf(err) != resolve.FieldDespiteEvidence ||
			!strings.Contains(ledger.ErrorMessage(err), "shows object ch_7") {
			t.Fatalf("not applied against a webhook's object, unconfirmed: %v", err)
		}
		no.DespiteEvidence = true
		p, err := r.svc.Propose(olu, sc, "acme", op.ID, no)
		if err != nil || !strings.Contains(p.Reason, "despite contrary evidence") {
			t.Fatalf("confirmed: %+v %v", p, err)
		}
		k, err := r.svc.Case(context.Background(), sc, "acme", op.ID)
		if err != nil || len(k.Warnings) != 1 {
			t.Fatalf("the approver is not warned: %v %v", k.Warnings, err)
		}
		if _, err := r.svc.Approve(bea, sc, "acme", p.ID, resolve.Approval{}); resolve.FieldOf(err) != resolve.FieldDespiteEvidence {
			t.Fatalf("approved unconfirmed: %v", err)
		}
		d, err := r.svc.Approve(bea, sc, "acme", p.ID, resolve.Approval{DespiteEvidence: true})
		if err != nil || d.Operation.State != ledger.FailedTerminal {
			t.Fatalf("approved confirmed: %+v %v", d.Operation, err)
		}

		// Another object than the evidence shows is a contradiction too;
		// the object the evidence shows is none.
		op2 := r.escalatedWith("legacy-billing", map[string]any{"via": "webhook", "event_id": "evt_8", "remote_id": "ch_8"})
		if _, err := r.svc.Propose(olu, sc, "acme", op2.ID, resolve.Proposal{Kind: ledger.KindConfirmSucceeded, RemoteRef: "ch_other",
			Reason: "x"}); resolve.FieldOf(err) != resolve.FieldDespiteEvidence || !strings.Contains(ledger.ErrorMessage(err), "ch_8, not ch_other") {
			t.Fatalf("another object: %v", err)
		}
		if _, err := r.svc.Propose(olu, sc, "acme", op2.ID, resolve.Proposal{Kind: ledger.KindConfirmSucceeded, RemoteRef: "ch_8",
			Reason: "the webhook shows it"}); err != nil {
			t.Fatalf("the evidence's own object: %v", err)
		}
		// Field refusals name their field, for the form.
		if _, err := r.svc.Propose(olu, sc, "acme", op.ID, resolve.Proposal{Kind: ledger.KindConfirmSucceeded, Reason: "x"}); resolve.FieldOf(err) != "" {
			t.Errorf("a resolved operation: %v", err)
		}
		op3 := r.escalatedWith("legacy-billing", map[string]any{"via": "lookup", "status": 200, "results": 0})
		if _, err := r.svc.Propose(olu, sc, "acme", op3.ID, resolve.Proposal{Kind: ledger.KindConfirmSucceeded, Reason: "x"}); resolve.FieldOf(err) != resolve.FieldRemoteRef {
			t.Errorf("no object id: %v", err)
		}
		if _, err := r.svc.Propose(olu, sc, "acme", op3.ID, resolve.Proposal{Kind: ledger.KindConfirmNotApplied}); resolve.FieldOf(err) != resolve.FieldReason {
			t.Errorf("no reason: %v", err)
		}
	})
}

// Only the choices the contract and the evidence allow are offered, each
// other with why: supersede is never offered at a target whose contract
// cannot prove absence (transfers), and is refused if proposed anyway.
func TestCase_OffersOnlyAllowedChoices(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		t.Parallel()
		r := newRigWith(t, h, transfersYAML)
		op := r.escalatedWith("transfers", map[string]any{"via": "lookup", "status": 200, "results": 0})
		sc := resolve.TenantScope("acme")
		k, err := r.svc.Case(context.Background(), sc, "acme", op.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, kind := range k.Kinds {
			if kind == ledger.KindSupersede || kind == ledger.KindReplay {
				t.Fatalf("offered %s: %v", kind, k.Kinds)
			}
		}
		if len(k.NotOffered) != 2 || !strings.Contains(k.NotOffered[1].Why, "does not document that the target rejects requests after the deadline") ||
			k.NoSupersede != k.NotOffered[1].Why {
			t.Fatalf("not offered: %+v", k.NotOffered)
		}
		if _, err := r.svc.Propose(olu, sc, "acme", op.ID, resolve.Proposal{Kind: ledger.KindSupersede, Reason: "gone"}); resolve.FieldOf(err) != resolve.FieldKind {
			t.Fatalf("supersede proposed anyway: %v", err)
		}
		if k.Lookup == nil || k.Lookup.Results != 0 {
			t.Errorf("latest lookup: %+v", k.Lookup)
		}
	})
}

// Warnings and the unverifiable note in words.
func TestWarnings_Words(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 42, 0, 0, time.UTC)
	ev := []resolve.Seen{
		{Source: resolve.SourceWebhook, At: at, EventID: "evt_1", RemoteID: "ch_1", Compared: resolve.Mismatched, Mismatched: []string{"amount"}},
		{Source: resolve.SourceLookup, At: at, RemoteID: "ch_2", Failed: true},
		{Source: resolve.SourceQuarantine, At: at, EventID: "evt_5", RemoteID: "ch_5"},
	}
	for _, c := range []struct {
		kind ledger.ResolutionKind
		ref  string
		want []string
	}{
		{ledger.KindConfirmNotApplied, "", []string{"The webhook event evt_1 of 1 Mar 10:42 UTC shows object ch_1: the target may hold it, so it may have been applied.",
			"The quarantined webhook event evt_5 of 1 Mar 10:42 UTC shows object ch_5: the target may hold it, so it may have been applied."}},
		{ledger.KindConfirmSucceeded, "ch_1", []string{"The webhook event evt_1 of 1 Mar 10:42 UTC shows object ch_1 differing from the approved request in: amount."}},
		{ledger.KindConfirmSucceeded, "ch_2", []string{"Settle's lookup of 1 Mar 10:42 UTC documents object ch_2 as failed: nothing was applied."}},
		{ledger.KindConfirmSucceeded, "ch_3", []string{"The evidence shows object ch_5, not ch_3."}},
		{ledger.KindReplay, "", nil},
	} {
		if got := resolve.Warnings(ev, c.kind, c.ref); strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("%s %s: %q, want %q", c.kind, c.ref, got, c.want)
		}
	}
	if got := resolve.Unverifiable(nil, "legacy-billing"); got != "settle cannot check this object id: legacy-billing offers no lookup, so the approver must check it at the target." {
		t.Errorf("unverifiable: %q", got)
	}
}
