package reconciler

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"settle/ledger"
	"settle/target"
)

// contractYAML is a class A+B target whose 4xx rows cite documentation.
const contractYAML = `
targets:
  - name: payments
    owner: {team: Payments team, escalation_contact: pay@example.invalid}
    documentation: {url: "https://docs.example.invalid/api", checked: 2026-11-01}
    base_url: http://127.0.0.1:1
    timeout: 1s
    deadline: 1h
    create: {method: POST, path: /v1/charges}
    reference_field: metadata.settle_ref
    tenant_field: metadata.settle_tenant
    idempotency: {header: Idempotency-Key, retention: 24h, mismatch: rejected, concurrent: conflict}
    lookup: {path: "/v1/charges?reference={reference}", results_field: data, read_after_write: true}
    outcomes:
      - {status: 201, outcome: succeeded}
      - {status: 202, outcome: accepted_pending}
      - {status: 400, outcome: rejected_without_side_effect, documentation: "https://docs.example.invalid/api#errors"}
      - {status: 409, outcome: in_progress}
    response:
      id_field: id
      match: [amount, currency, metadata.settle_ref, metadata.settle_tenant]
      status_field: status
      statuses:
        - {value: succeeded, outcome: succeeded}
        - {value: processing, outcome: pending, documentation: "https://docs.example.invalid/api#status"}
        - {value: declined, outcome: failed, documentation: "https://docs.example.invalid/api#status"}
`

func testContract(t *testing.T) *target.Contract {
	t.Helper()
	set, err := target.Parse("test.yaml", []byte(contractYAML))
	if err != nil {
		t.Fatal(err)
	}
	c, _ := set.Get("payments")
	return c
}

// approved is the operation the verdicts judge. Its payload's values are
// distinctive, so that finding one in evidence cannot be a coincidence.
var approved = ledger.Operation{
	Tenant: "acme", ID: "op-1", Fence: 3, RemoteKey: "key-1",
	Payload: []byte(`{"amount":4321,"currency":"EUR","description":"winter boots",` +
		`"metadata":{"settle_ref":"key-1","settle_tenant":"acme"}}`),
}

func remote(id, amount, tenant, status string) []byte {
	return []byte(`{"id":"` + id + `","amount":` + amount + `,"currency":"EUR","status":"` + status +
		`","metadata":{"settle_ref":"key-1","settle_tenant":"` + tenant + `"}}`)
}

func TestSendVerdict(t *testing.T) {
	t.Parallel()
	c := testContract(t)
	for name, tc := range map[string]struct {
		a      target.Attempt
		to     ledger.State
		ref    string
		reason string
	}{
		"Timeout":            {target.Attempt{Failure: "timeout"}, ledger.Unknown, "", "no response: timeout"},
		"Reset":              {target.Attempt{Failure: "connection reset"}, ledger.Unknown, "", "no response"},
		"Verified201":        {target.Attempt{Status: 201, Body: remote("ch_1", "4321", "acme", "succeeded")}, ledger.Succeeded, "ch_1", "confirmed"},
		"201WithoutID":       {target.Attempt{Status: 201, Body: []byte(`{"amount":500}`)}, ledger.Unknown, "", "no readable object id"},
		"201WrongAmount":     {target.Attempt{Status: 201, Body: remote("ch_1", "400", "acme", "succeeded")}, ledger.Escalated, "ch_1", "does not match"},
		"201OtherTenant":     {target.Attempt{Status: 201, Body: remote("ch_1", "4321", "globex", "succeeded")}, ledger.Escalated, "ch_1", "does not match"},
		"201Pending":         {target.Attempt{Status: 201, Body: remote("ch_1", "4321", "acme", "pending")}, ledger.Unknown, "", "counts as pending"},
		"202Accepted":        {target.Attempt{Status: 202, Body: []byte(`{"id":"ch_2","status":"pending"}`)}, ledger.Unknown, "ch_2", "accepted"},
		"400Documented":      {target.Attempt{Status: 400, Body: []byte(`{}`)}, ledger.FailedTerminal, "", "no side effect"},
		"409InProgress":      {target.Attempt{Status: 409}, ledger.Unknown, "", "still executing"},
		"500Undocumented":    {target.Attempt{Status: 500}, ledger.Unknown, "", "does not prove"},
		"503Undocumented":    {target.Attempt{Status: 503}, ledger.Unknown, "", "does not prove"},
		"422Unmapped":        {target.Attempt{Status: 422}, ledger.Unknown, "", "does not prove"},
		"200UnmappedSuccess": {target.Attempt{Status: 200, Body: remote("ch_1", "4321", "acme", "succeeded")}, ledger.Unknown, "", "does not prove"},
		"201Declined":        {target.Attempt{Status: 201, Body: remote("ch_1", "4321", "acme", "declined")}, ledger.FailedTerminal, "ch_1", `status "declined", documented as failed`},
		"201Processing":      {target.Attempt{Status: 201, Body: remote("ch_1", "4321", "acme", "processing")}, ledger.Unknown, "", "not complete"},
		"201Unlisted":        {target.Attempt{Status: 201, Body: remote("ch_1", "4321", "acme", "requires_action")}, ledger.Unknown, "", "counts as pending"},
		"201DeclinedOther":   {target.Attempt{Status: 201, Body: remote("ch_1", "4321", "globex", "declined")}, ledger.Escalated, "ch_1", "does not match"},
		"NotSent": {target.Attempt{NotSent: `the tenant has no parameter "account", which target payments needs`, Missing: []string{"account"}},
			ledger.Escalated, "", `nothing was sent: the tenant has no parameter "account"`},
	} {
		t.Run(name, func(t *testing.T) {
			v := sendVerdict(c, approved, tc.a)
			if v.to != tc.to || v.remoteRef != tc.ref || !strings.Contains(v.reason, tc.reason) {
				t.Fatalf("verdict = %s ref %q %q, want %s ref %q containing %q", v.to, v.remoteRef, v.reason, tc.to, tc.ref, tc.reason)
			}
			o := v.outcome(approved, ledger.InFlight, ledger.ActorExecutor)
			if o.Fence != approved.Fence || o.From != ledger.InFlight {
				t.Fatal("outcome lost the fence")
			}
			noPayload(t, approved.Payload, o)
		})
	}
	// The documented rejection cites its documentation in the evidence.
	v := sendVerdict(c, approved, target.Attempt{Status: 400})
	if v.evidence["documentation"] != "https://docs.example.invalid/api#errors" {
		t.Fatalf("evidence = %v", v.evidence)
	}
	// So does an object whose status documents failure, with its id and
	// the (listed) status.
	v = sendVerdict(c, approved, target.Attempt{Status: 201, Body: remote("ch_9", "4321", "acme", "declined")})
	if want := map[string]any{"status": 201, "outcome": "succeeded", "remote_id": "ch_9", "object_status": "declined",
		"documentation": "https://docs.example.invalid/api#status"}; !reflect.DeepEqual(v.evidence, want) {
		t.Fatalf("failed object: evidence = %v; want %v", v.evidence, want)
	}
	// An unlisted status is not repeated: it is the target's free text.
	v = sendVerdict(c, approved, target.Attempt{Status: 201, Body: remote("ch_9", "4321", "acme", "requires_action")})
	if _, ok := v.evidence["object_status"]; ok {
		t.Fatalf("unlisted status: evidence = %v", v.evidence)
	}
	// Nothing sent: the reason and the missing names, never a value.
	v = sendVerdict(c, approved, target.Attempt{NotSent: "x", Missing: []string{"account"}})
	if want := map[string]any{"sent": false, "missing": []string{"account"}}; !reflect.DeepEqual(v.evidence, want) {
		t.Fatalf("not sent: evidence = %v; want %v", v.evidence, want)
	}
	// A mismatch names the fields and the kinds of their values.
	v = sendVerdict(c, approved, target.Attempt{Status: 201, Body: []byte(`{"id":"ch_1","amount":"4321","currency":"EUR","status":"succeeded",` +
		`"metadata":{"settle_ref":"key-1"}}`)})
	if !reflect.DeepEqual(v.evidence["mismatched_fields"], []string{"amount", "metadata.settle_tenant"}) ||
		!reflect.DeepEqual(v.evidence["mismatch_kinds"], map[string]string{"amount": "number vs string", "metadata.settle_tenant": "string vs missing"}) {
		t.Fatalf("mismatch: evidence = %v", v.evidence)
	}
	// A replayed answer says so.
	v = sendVerdict(c, approved, target.Attempt{Status: 201, Replayed: true, Body: remote("ch_1", "4321", "acme", "succeeded")})
	if v.to != ledger.Succeeded || v.evidence["replayed"] != true {
		t.Fatalf("replayed: %+v", v)
	}
}

// noPayload fails if any leaf value of the payload shows up in the
// outcome's evidence or reason. That includes the settle reference and
// tenant that Bind writes into the payload: evidence says how a verdict was
// reached (status, outcome, the remote object's id, the names of fields
// that differ, the documentation cited), and the operation's own row
// already holds its reference and tenant, so no verdict needs to copy
// them, and evidence can be shown to anyone who may see the operation.
func noPayload(t *testing.T, payload []byte, o ledger.Outcome) {
	t.Helper()
	ev, err := o.EvidenceJSON()
	if err != nil {
		t.Fatalf("evidence: %v", err)
	}
	var doc any
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber() // 4321, not 4321.0
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	var leaves []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		case nil:
		default:
			leaves = append(leaves, fmt.Sprint(v))
		}
	}
	walk(doc)
	if len(leaves) < 5 {
		t.Fatalf("found %d leaf values in the payload, want 5: %v", len(leaves), leaves)
	}
	for _, leaf := range leaves {
		if strings.Contains(string(ev), leaf) || strings.Contains(o.Reason, leaf) {
			t.Fatalf("the payload value %q shows up in evidence %s or reason %q", leaf, ev, o.Reason)
		}
	}
}

func TestDelayGrows(t *testing.T) {
	t.Parallel()
	r := &Reconciler{MinBackoff: time.Second, MaxBackoff: time.Minute}
	r.defaults()
	sent := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	op := ledger.Operation{CreatedAt: sent, LastSentAt: &sent}
	for _, c := range []struct {
		age      time.Duration
		min, max time.Duration
	}{
		{0, 800 * time.Millisecond, 1200 * time.Millisecond},          // floor
		{10 * time.Second, 4 * time.Second, 6 * time.Second},          // half the age
		{80 * time.Second, 32 * time.Second, 48 * time.Second},        // …growing with it
		{time.Hour, 48 * time.Second, 72 * time.Second},               // ceiling
		{-time.Hour, 800 * time.Millisecond, 1200 * time.Millisecond}, // clock skew: floor
	} {
		for i := 0; i < 50; i++ {
			if d := r.delay(op, sent.Add(c.age), false); d < c.min || d > c.max {
				t.Fatalf("age %s: delay %s outside [%s, %s]", c.age, d, c.min, c.max)
			}
		}
	}
	if d := r.delay(op, sent.Add(time.Hour), true); d > 1200*time.Millisecond {
		t.Fatalf("soon = %s", d)
	}
}

// A verdict the ledger would refuse is recorded as what it is, an answer
// settle cannot use: UNKNOWN with the ledger's reason, so that the
// deadline escalates it instead of every round losing it again; reasons
// past the ledger's bound are cut, never refused.
func TestRecordable(t *testing.T) {
	op := ledger.Operation{Tenant: "acme", ID: "x", Fence: 3}
	ok := verdict{to: ledger.Succeeded, remoteRef: "ch_1", reason: "confirmed", evidence: map[string]any{"status": 201}}
	if got := recordable(ok, op, ledger.InFlight, ledger.ActorExecutor); !reflect.DeepEqual(got, ok) {
		t.Fatalf("a recordable verdict changed: %+v", got)
	}
	for name, v := range map[string]verdict{
		"NUL id":        {to: ledger.Succeeded, remoteRef: "ch_\x00", reason: "confirmed"},
		"huge evidence": {to: ledger.Succeeded, remoteRef: "ch_1", evidence: map[string]any{"x": strings.Repeat("y", 5000)}},
		"NUL evidence":  {to: ledger.Escalated, evidence: map[string]any{"x": "\x00"}},
	} {
		got := recordable(v, op, ledger.Unknown, ledger.ActorReconciler)
		if got.to != ledger.Unknown || got.remoteRef != "" || got.evidence["unrecordable"] == nil ||
			got.evidence["verdict"] != string(v.to) || !strings.Contains(got.reason, "could not be recorded") {
			t.Fatalf("%s: %+v", name, got)
		}
		if _, err := got.outcome(op, ledger.Unknown, ledger.ActorReconciler).EvidenceJSON(); err != nil {
			t.Fatalf("%s: the replacement is refused too: %v", name, err)
		}
	}
	long := verdict{to: ledger.Escalated, reason: strings.Repeat("é", 400)}
	out := long.outcome(op, ledger.Unknown, ledger.ActorReconciler)
	if _, err := out.EvidenceJSON(); err != nil || !strings.HasSuffix(out.Reason, "…") {
		t.Fatalf("a long reason: %v %q", err, out.Reason)
	}
}
