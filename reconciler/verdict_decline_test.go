package reconciler

import (
	"strings"
	"testing"

	"settle/ledger"
	"settle/target"
)

// declineContract is contractYAML with Stripe's decline: a 402 documented
// as having no side effect whose body carries the declined object at
// error.payment_intent.
func declineContract(t *testing.T) *target.Contract {
	t.Helper()
	y := strings.Replace(contractYAML, "      - {status: 409, outcome: in_progress}\n",
		"      - {status: 402, outcome: rejected_without_side_effect, documentation: \"https://docs.example.invalid/api#declines\"}\n"+
			"      - {status: 409, outcome: in_progress}\n", 1)
	y = strings.Replace(y, "    response:\n", "    response:\n      error_object_field: error.payment_intent\n", 1)
	set, err := target.Parse("test.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	c, _ := set.Get("payments")
	return c
}

func declined(object string) []byte {
	return []byte(`{"error":{"type":"card_error","code":"card_declined","message":"Your card was declined.","payment_intent":` + object + `}}`)
}

// A decline that carries the declined object is FAILED_TERMINAL (the
// documented row decides) with the object's id as the remote reference and
// evidence, so that the auditor and a person can find the intent. The
// object adds nothing when it is another operation's or its id is not
// plain text, and an object whose status contradicts the row leaves the
// operation UNKNOWN, to be looked up.
func TestSendVerdict_DeclineCarriesTheObject(t *testing.T) {
	t.Parallel()
	c := declineContract(t)
	long := strings.Repeat("x", 257)
	for name, tc := range map[string]struct {
		body   []byte
		to     ledger.State
		ref    string
		reason string
		note   string // evidence "error_object"
	}{
		"Declined":          {declined(string(remote("pi_1", "4321", "acme", "declined"))), ledger.FailedTerminal, "pi_1", "kept as the remote reference", ""},
		"NoStatusTable":     {declined(`{"id":"pi_1","metadata":{"settle_ref":"key-1","settle_tenant":"acme"},"status":"declined"}`), ledger.FailedTerminal, "pi_1", "no side effect", ""},
		"NoObject":          {[]byte(`{"error":{"type":"card_error"}}`), ledger.FailedTerminal, "", "no side effect", ""},
		"NotJSON":           {[]byte(`<html>`), ledger.FailedTerminal, "", "no side effect", ""},
		"OtherTenant":       {declined(string(remote("pi_1", "4321", "globex", "declined"))), ledger.FailedTerminal, "", "no side effect", "ignored: it does not carry this operation's reference and tenant"},
		"OtherReference":    {declined(`{"id":"pi_1","status":"declined","metadata":{"settle_ref":"key-2","settle_tenant":"acme"}}`), ledger.FailedTerminal, "", "no side effect", "ignored: it does not carry this operation's reference and tenant"},
		"NoID":              {declined(`{"status":"declined","metadata":{"settle_ref":"key-1","settle_tenant":"acme"}}`), ledger.FailedTerminal, "", "no side effect", "ignored: its id is missing, longer than 256 bytes or not plain text"},
		"IDTooLong":         {declined(string(remote(long, "4321", "acme", "declined"))), ledger.FailedTerminal, "", "no side effect", "ignored: its id is missing, longer than 256 bytes or not plain text"},
		"IDControl":         {declined(string(remote(`pi_1\u001b[31m`, "4321", "acme", "declined"))), ledger.FailedTerminal, "", "no side effect", "ignored: its id is missing, longer than 256 bytes or not plain text"},
		"StatusMissing":     {declined(`{"id":"pi_1","metadata":{"settle_ref":"key-1","settle_tenant":"acme"}}`), ledger.FailedTerminal, "", "no side effect", "ignored: its status is unreadable"},
		"StatusSucceeded":   {declined(string(remote("pi_1", "4321", "acme", "succeeded"))), ledger.Unknown, "", `has status "succeeded", documented as succeeded`, ""},
		"StatusPending":     {declined(string(remote("pi_1", "4321", "acme", "processing"))), ledger.Unknown, "", `has status "processing", documented as pending`, ""},
		"StatusUnlisted":    {declined(string(remote("pi_1", "4321", "acme", "requires_payment_method"))), ledger.FailedTerminal, "pi_1", "no side effect", ""},
		"AmountDiffersOnly": {declined(string(remote("pi_1", "1", "acme", "declined"))), ledger.FailedTerminal, "pi_1", "kept as the remote reference", ""},
	} {
		t.Run(name, func(t *testing.T) {
			c := c
			if name == "NoStatusTable" {
				cc := *c
				cc.Response.StatusField, cc.Response.Statuses = "", nil
				c = &cc
			}
			v := sendVerdict(c, approved, target.Attempt{Status: 402, Body: tc.body})
			if v.to != tc.to || v.remoteRef != tc.ref || !strings.Contains(v.reason, tc.reason) {
				t.Fatalf("verdict = %s ref %q %q; want %s ref %q containing %q", v.to, v.remoteRef, v.reason, tc.to, tc.ref, tc.reason)
			}
			if got, _ := v.evidence["error_object"].(string); got != tc.note {
				t.Errorf("evidence error_object = %q; want %q", got, tc.note)
			}
			if tc.ref != "" && v.evidence["remote_id"] != tc.ref {
				t.Errorf("evidence = %v; want remote_id %s", v.evidence, tc.ref)
			}
			if v.evidence["documentation"] != "https://docs.example.invalid/api#declines" {
				t.Errorf("evidence = %v; want the 402 row's documentation", v.evidence)
			}
			if strings.Contains(v.reason, "pi_1") || strings.Contains(v.reason, "declined.") {
				t.Errorf("reason %q repeats what the target wrote", v.reason)
			}
			noPayload(t, approved.Payload, v.outcome(approved, ledger.InFlight, ledger.ActorExecutor))
		})
	}
	v := sendVerdict(c, approved, target.Attempt{Status: 402, Body: declined(string(remote("pi_1", "4321", "acme", "declined")))})
	if v.evidence["object_status"] != "declined" || v.evidence["object_documentation"] != "https://docs.example.invalid/api#status" {
		t.Errorf("evidence = %v; want the listed status and its citation", v.evidence)
	}
}
