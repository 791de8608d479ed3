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
		a          target.Attempt
		to         ledger.State
		didNothing bool
	}{
		"400Documented": {target.Attempt{Status: 400}, ledger.Unknown, true},
		"Verified201":   {target.Attempt{Status: 201, Body: remote("ch_1", "4321", "acme", "succeeded")}, ledger.Succeeded, false},
		"409InProgress": {target.Attempt{Status: 409}, ledger.Unknown, false},
		"Timeout":       {target.Attempt{Failure: "timeout"}, ledger.Unknown, false},
		"500":           {target.Attempt{Status: 500}, ledger.Unknown, false},
	} {
		t.Run(name, func(t *testing.T) {
			v := laterSendVerdict(c, approved, tc.a, "same-key replay")
			if v.to != tc.to || v.didNothing != tc.didNothing || v.evidence["via"] != "same-key replay" {
				t.Fatalf("verdict %s didNothing=%v evidence %v; want %s didNothing=%v", v.to, v.didNothing, v.evidence, tc.to, tc.didNothing)
			}
			if tc.didNothing && (!strings.Contains(v.reason, "proves nothing about the first send") ||
				v.evidence["documentation"] == nil || v.evidence["status"] != tc.a.Status) {
				t.Fatalf("reason %q evidence %v", v.reason, v.evidence)
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
}
