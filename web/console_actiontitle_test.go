package web

import (
	"strings"
	"testing"
	"time"

	"settle/ledger"
)

// No person's action is titled by its code ("quarantine.resolve"): every
// kind the ledger records has words, and a kind newer than the table gets
// plain ones too.
func TestActionEvent_PlainTitles(t *testing.T) {
	t.Parallel()
	now := time.Now()
	for _, k := range append(append([]ledger.ActionKind{}, ledger.ActionKinds...), "something.new") {
		if _, ok := actionTitles[k]; !ok && k != "something.new" {
			t.Errorf("%s has no words", k)
		}
		v := actionEvent(ledger.Action{Kind: k, At: now, Name: "Ada Owner", Role: "owner", Reason: "approved", Object: "7"}, nil, now)
		if strings.Contains(v.Title, string(k)) || strings.Contains(v.Title, "_") || v.Title == "" {
			t.Errorf("%s titled %q", k, v.Title)
		}
		if v.By != "Ada Owner (owner)" {
			t.Errorf("%s by %q", k, v.By)
		}
	}
	if v := actionEvent(ledger.Action{Kind: ledger.ActionQuarantineResolve, At: now}, nil, now); v.Title != "Dismissed an inbound event about this operation" {
		t.Errorf("dismissal titled %q", v.Title)
	}
}

// A proposal's actions say what it asked for; a person is named by name
// and role, and an unknown name is said so, never by subject.
func TestActionWords_Proposal(t *testing.T) {
	t.Parallel()
	now := time.Now()
	props := map[string]ledger.Resolution{"3": {ID: 3, Kind: ledger.KindConfirmSucceeded, RemoteRef: "ch_42", Reason: "seen at the provider"},
		"4": {ID: 4, Kind: ledger.KindConfirmNotApplied}}
	for _, c := range []struct {
		a    ledger.Action
		want string
	}{
		{ledger.Action{Kind: ledger.ActionPropose, Object: "3", Reason: "seen at the provider"}, "Proposed: confirm succeeded with ch_42 (proposal 3)"},
		{ledger.Action{Kind: ledger.ActionApprove, Object: "3", Reason: "approved"}, "Approved: confirm succeeded with ch_42 (proposal 3)"},
		{ledger.Action{Kind: ledger.ActionReject, Object: "4", Reason: "the charge exists"}, "Rejected: confirm not applied (proposal 4)"},
		{ledger.Action{Kind: ledger.ActionApprove, Object: "4", Reason: "stale: the operation changed"}, "Too late to approve (the proposal is void): confirm not applied (proposal 4)"},
		{ledger.Action{Kind: ledger.ActionPropose, Object: "9"}, "Proposed: a manual resolution (proposal 9)"},
	} {
		c.a.At, c.a.Subject = now, "owner-grace"
		v := actionEvent(c.a, props, now)
		if v.Title != c.want {
			t.Errorf("%s %s titled %q, want %q", c.a.Kind, c.a.Object, v.Title, c.want)
		}
		if v.By != "a person whose name settle does not know" || strings.Contains(strings.Join(v.Lines, " "), "owner-grace") {
			t.Errorf("%s by %q, lines %q", c.a.Kind, v.By, v.Lines)
		}
	}
	if v := actionEvent(ledger.Action{Kind: ledger.ActionApprove, Object: "3", At: now,
		Reason: "approved; confirmed having weighed the contrary evidence"}, props, now); v.Title != "Approved: confirm succeeded with ch_42 (proposal 3)" ||
		len(v.Lines) != 1 || v.Lines[0] != "The approver confirmed having weighed the contrary evidence." {
		t.Errorf("approval despite evidence: %q %q", v.Title, v.Lines)
	}
	if v := actionEvent(ledger.Action{Kind: ledger.ActionReject, Object: "4", Reason: "the charge exists", At: now}, props, now); len(v.Lines) == 0 || v.Lines[0] != "Reason: the charge exists." {
		t.Errorf("rejection lines %q", v.Lines)
	}
}
