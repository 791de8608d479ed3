package gonogo_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"settle/gonogo"
	"settle/ledger"
	"settle/target"
)

var now = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// contract is testdata's "payments", which sets every field.
func contract(t *testing.T) *target.Contract {
	t.Helper()
	set, err := target.Load("../target/testdata/contracts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, ok := set.Get("payments")
	if !ok {
		t.Fatal("no payments contract in testdata")
	}
	c.Documentation.Checked = now.AddDate(0, -1, 0)
	return c
}

// passing are facts under which every control passes.
func passing(t *testing.T) gonogo.Facts {
	t.Helper()
	var drill []ledger.DrillResult
	for _, tt := range gonogo.Tests {
		drill = append(drill, ledger.DrillResult{RunID: "r", Target: "payments", Number: tt.Number, Name: tt.Name,
			Passed: true, RanAt: now.AddDate(0, 0, -10), Evidence: map[string]any{"base_url": "https://sandbox.example.com"}})
	}
	return gonogo.Facts{
		Contract: contract(t), Now: now,
		Schema: ledger.SchemaFacts{Version: 21, Latest: 21, IntentUnique: true, Index: "uniq",
			PayloadHash: true, Fence: true, Lease: true},
		Drill:     drill,
		Retention: ledger.RetentionPolicy{Owner: "Data team", RedactPayloadsAfter: 30 * 24 * time.Hour},
	}
}

func TestEvaluate_AllPass(t *testing.T) {
	t.Parallel()
	rep := gonogo.Evaluate(passing(t))
	if !rep.Go || len(rep.Controls) != 11 || rep.Failed() != 0 {
		t.Fatalf("Evaluate(passing) = %+v; want GO on eleven controls", rep)
	}
	for i, c := range rep.Controls {
		if c.Number != i+1 || c.Evidence == "" || c.Verdict() != "PASS" {
			t.Errorf("control %d = %+v; want PASS numbered %d with evidence", i, c, i+1)
		}
	}
	// The evidence names its sources: the documentation and its date, the
	// live index, the drill's date, the owner.
	for n, want := range map[int]string{1: "checked 2026-11-01", 2: "unique index uniq", 4: "drill test 3 claim_race passed on 2026-11-21 against https://sandbox.example.com",
		9: "Payments team", 10: "retention owner Data team"} {
		if ev := rep.Controls[n-1].Evidence; !strings.Contains(ev, want) {
			t.Errorf("control %d evidence %q lacks %q", n, ev, want)
		}
	}
	if _, err := json.Marshal(rep); err != nil {
		t.Fatal(err)
	}
}

// TestEvaluate_Fails breaks one fact at a time: exactly the named control
// fails (others may too where the fact is shared, listed in also), with
// evidence that says why.
func TestEvaluate_Fails(t *testing.T) {
	t.Parallel()
	drillFailed := func(n int) func(*gonogo.Facts) {
		return func(f *gonogo.Facts) {
			for i := range f.Drill {
				if f.Drill[i].Number == n {
					f.Drill[i].Passed, f.Drill[i].Reason = false, "it broke"
				}
			}
		}
	}
	cases := []struct {
		name    string
		control int
		also    []int
		break_  func(f *gonogo.Facts)
		want    string
	}{
		{"documentation stale", 1, nil, func(f *gonogo.Facts) { f.Contract.Documentation.Checked = now.AddDate(0, 0, -181) }, "older than 180d"},
		{"documentation undated", 1, nil, func(f *gonogo.Facts) { f.Contract.Documentation.Checked = time.Time{} }, "documentation.checked missing"},
		{"mismatch undocumented", 1, nil, func(f *gonogo.Facts) { f.Contract.Idempotency.Mismatch = target.Undocumented }, "idempotency.mismatch undocumented"},
		{"lookup consistency undocumented", 1, nil, func(f *gonogo.Facts) {
			f.Contract.Lookup.ReadAfterWrite, f.Contract.Lookup.PropagationLimit = false, 0
		}, "lookup consistency undocumented"},
		{"no identity index", 2, nil, func(f *gonogo.Facts) { f.Schema.IntentUnique = false }, "no unique index"},
		{"schema behind", 2, []int{3, 4, 5}, func(f *gonogo.Facts) { f.Schema.Version = 20 }, "behind this build's 21"},
		{"schema unreadable", 2, []int{3, 4, 5}, func(f *gonogo.Facts) { f.SchemaErr = "connection refused" }, "live schema unreadable"},
		{"no payload hash", 3, nil, func(f *gonogo.Facts) { f.Schema.PayloadHash = false }, "payload_hash missing"},
		{"payload drill failed", 3, nil, drillFailed(4), "drill test 4 payload_changed FAILED"},
		{"no fence", 4, nil, func(f *gonogo.Facts) { f.Schema.Fence = false }, "fence_token missing"},
		{"claim drill failed", 4, nil, drillFailed(3), "drill test 3 claim_race FAILED"},
		{"no lease", 5, nil, func(f *gonogo.Facts) { f.Schema.Lease = false }, "lease_expires_at missing"},
		{"crash drill failed", 5, nil, drillFailed(2), "worker_killed FAILED"},
		{"response lost failed", 6, nil, drillFailed(1), "response_lost FAILED on 2026-11-21: it broke"},
		{"lookup lag failed", 6, nil, drillFailed(5), "lookup_lag FAILED"},
		{"test missing from drill", 6, nil, func(f *gonogo.Facts) { f.Drill = f.Drill[1:] }, "lacks test 1 response_lost"},
		{"no drill", 3, []int{4, 5, 6, 7, 11}, func(f *gonogo.Facts) { f.Drill = nil }, "no drill recorded (run: settle drill --target payments)"},
		{"drill too old", 6, []int{3, 4, 5, 7, 11}, func(f *gonogo.Facts) {
			for i := range f.Drill {
				f.Drill[i].RanAt = now.AddDate(0, 0, -91)
			}
		}, "older than 90d and no longer counts"},
		{"drill older than a shorter max age", 11, []int{3, 4, 5, 6, 7}, func(f *gonogo.Facts) { f.MaxDrillAge = 7 * 24 * time.Hour }, "older than 7d"},
		{"no id field", 7, nil, func(f *gonogo.Facts) { f.Contract.Response.IDField = "" }, "response.id_field missing"},
		{"nothing confirms", 7, nil, func(f *gonogo.Facts) {
			f.Contract.Lookup, f.Contract.Webhook = nil, nil
			f.Contract.Outcomes = []target.OutcomeRule{{Status: "202", Outcome: target.AcceptedPending}}
		}, "nothing can confirm a success"},
		{"inbound drill failed", 7, nil, drillFailed(6), "inbound_unmatched FAILED"},
		{"undocumented terminal status", 8, nil, func(f *gonogo.Facts) {
			f.Contract.Outcomes = append(f.Contract.Outcomes, target.OutcomeRule{Status: "500", Outcome: target.RejectedWithoutSideEffect})
		}, "status 500 is rejected_without_side_effect without documentation"},
		{"undocumented failed object", 8, nil, func(f *gonogo.Facts) {
			f.Contract.Response.Statuses = append(f.Contract.Response.Statuses, target.StatusRule{Value: "void", Outcome: target.ObjectFailed})
		}, `object status "void" is failed without documentation`},
		{"no escalation contact", 9, nil, func(f *gonogo.Facts) { f.Contract.Owner.EscalationContact = "" }, "owner.escalation_contact missing"},
		{"no owner team", 9, nil, func(f *gonogo.Facts) { f.Contract.Owner.Team = "" }, "owner.team missing"},
		{"no deadline", 9, nil, func(f *gonogo.Facts) { f.Contract.Deadline = 0 }, "deadline missing"},
		{"no retention owner", 10, nil, func(f *gonogo.Facts) { f.Retention.Owner = "" }, "no retention owner"},
		{"no retention rule", 10, nil, func(f *gonogo.Facts) { f.Retention = ledger.RetentionPolicy{Owner: "Data team"} }, "no retention rule"},
		{"delete before redact", 10, nil, func(f *gonogo.Facts) { f.Retention.DeleteOperationsAfter = time.Hour }, "retention rule invalid"},
		{"repeat drill failed", 11, nil, drillFailed(7), "legitimate_repeat FAILED"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := passing(t)
			tc.break_(&f)
			rep := gonogo.Evaluate(f)
			if rep.Go {
				t.Fatal("Evaluate = GO; want NO-GO")
			}
			failing := map[int]bool{tc.control: true}
			for _, n := range tc.also {
				failing[n] = true
			}
			for _, c := range rep.Controls {
				if c.Pass == failing[c.Number] {
					t.Errorf("control %d %s = %s: %s", c.Number, c.Name, c.Verdict(), c.Evidence)
				}
			}
			if ev := rep.Controls[tc.control-1].Evidence; !strings.Contains(ev, tc.want) {
				t.Errorf("control %d evidence %q lacks %q", tc.control, ev, tc.want)
			}
		})
	}
}

// A test the target cannot run counts as its stored verdict says: a
// not-applicable result that passed (no webhooks, so nothing inbound can
// move an operation) keeps the control green and says why; one that
// failed (no lookup to count remote objects) turns it red.
func TestEvaluate_NotApplicable(t *testing.T) {
	t.Parallel()
	f := passing(t)
	f.Drill[5].NotApplicable, f.Drill[5].Reason = true, "the contract has no webhook block"
	f.Drill[0].NotApplicable, f.Drill[0].Passed, f.Drill[0].Reason = true, false, "the target has no lookup"
	rep := gonogo.Evaluate(f)
	if c := rep.Controls[6]; !c.Pass || !strings.Contains(c.Evidence, "not applicable on 2026-11-21: the contract has no webhook block") {
		t.Errorf("control 7 = %+v; want PASS naming the not-applicable test", c)
	}
	if c := rep.Controls[5]; c.Pass || !strings.Contains(c.Evidence, "the target has no lookup") {
		t.Errorf("control 6 = %+v; want FAIL naming why", c)
	}
}
