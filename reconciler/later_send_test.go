package reconciler

import (
	"strings"
	"testing"

	"settle/ledger"
	"settle/target"
)

// An answer to a later send (replay or conditional resend) that says "this
// request did nothing" never ends FAILED_TERMINAL: it is UNKNOWN, then the
// operation is looked up with no more replays, or escalated.
func TestLaterSendVerdict(t *testing.T) {
	c := testContract(t) // 400 is documented as having no side effect
	for name, tc := range map[string]struct {
		a             target.Attempt
		to            ledger.State
		noMoreReplays bool
	}{
		"400Documented": {target.Attempt{Status: 400}, ledger.Unknown, true},
		"Verified201":   {target.Attempt{Status: 201, Body: remote("ch_1", "4321", "acme", "succeeded")}, ledger.Succeeded, false},
		"409InProgress": {target.Attempt{Status: 409}, ledger.Unknown, false},
		"Timeout":       {target.Attempt{Failure: "timeout"}, ledger.Unknown, false},
		"500":           {target.Attempt{Status: 500}, ledger.Unknown, false},
		// A found object documenting failure is final whichever send it answered.
		"201Declined": {target.Attempt{Status: 201, Body: remote("ch_1", "4321", "acme", "declined")}, ledger.FailedTerminal, false},
		// The target's saved answer to the first send, replayed: replaying
		// again earns it again.
		"500Replayed":        {target.Attempt{Status: 500, Replayed: true}, ledger.Unknown, true},
		"201PendingReplayed": {target.Attempt{Status: 201, Replayed: true, Body: remote("ch_1", "4321", "acme", "processing")}, ledger.Unknown, true},
		"201Replayed":        {target.Attempt{Status: 201, Replayed: true, Body: remote("ch_1", "4321", "acme", "succeeded")}, ledger.Succeeded, false},
		"NotSent":            {target.Attempt{NotSent: "no credential"}, ledger.Escalated, false},
	} {
		t.Run(name, func(t *testing.T) {
			v := laterSendVerdict(c, approved, tc.a, "same-key replay")
			if v.to != tc.to || v.noMoreReplays != tc.noMoreReplays || v.evidence["via"] != "same-key replay" {
				t.Fatalf("verdict %s noMoreReplays=%v evidence %v; want %s noMoreReplays=%v", v.to, v.noMoreReplays, v.evidence, tc.to, tc.noMoreReplays)
			}
			if tc.noMoreReplays && !tc.a.Replayed && (!strings.Contains(v.reason, "proves nothing about the first send") ||
				v.evidence["documentation"] == nil || v.evidence["status"] != tc.a.Status) {
				t.Fatalf("reason %q evidence %v", v.reason, v.evidence)
			}
			if tc.a.Replayed && (v.evidence["replayed"] != true ||
				(tc.noMoreReplays && !strings.Contains(v.reason, "saved answer to the first send"))) {
				t.Fatalf("replayed: reason %q evidence %v", v.reason, v.evidence)
			}
		})
	}

	rejected := laterSendVerdict(c, approved, target.Attempt{Status: 400}, "same-key replay")
	looked := afterLaterSend(c, rejected, true)
	o := looked.outcome(approved, ledger.Unknown, ledger.ActorReconciler)
	if o.To != ledger.Unknown || !o.EndReplay || !looked.soon || !strings.Contains(o.Reason, "looked up") {
		t.Fatalf("with a lookup: %+v", o)
	}
	if _, err := o.EvidenceJSON(); err != nil {
		t.Fatal(err)
	}
	escalated := afterLaterSend(c, rejected, false)
	if escalated.to != ledger.Escalated || escalated.endReplay || !strings.Contains(escalated.reason, "Payments team") {
		t.Fatalf("without a lookup: %+v", escalated)
	}
	if ok := afterLaterSend(c, laterSendVerdict(c, approved, target.Attempt{Status: 409}, "same-key replay"), false); ok.to != ledger.Unknown || ok.endReplay {
		t.Fatalf("a 409 is waited out, not escalated: %+v", ok)
	}
	// A replayed 500 ends the window too: looked up next, or escalated.
	saved := laterSendVerdict(c, approved, target.Attempt{Status: 500, Replayed: true}, "same-key replay")
	if v := afterLaterSend(c, saved, true); v.to != ledger.Unknown || !v.endReplay || !v.soon || v.evidence["replayed"] != true {
		t.Fatalf("replayed 500 with a lookup: %+v", v)
	}
	if v := afterLaterSend(c, saved, false); v.to != ledger.Escalated || v.endReplay {
		t.Fatalf("replayed 500 without a lookup: %+v", v)
	}
	// A request never sent is escalated at once, window untouched.
	if v := afterLaterSend(c, laterSendVerdict(c, approved, target.Attempt{NotSent: "x"}, "same-key replay"), true); v.to != ledger.Escalated || v.endReplay {
		t.Fatalf("not sent: %+v", v)
	}
}
