package web

import (
	"strings"
	"testing"
	"time"

	"settle/ledger"
)

// No person's action is titled by its code ("quarantine.resolve").
func TestActionEvent_PlainTitles(t *testing.T) {
	t.Parallel()
	now := time.Now()
	for _, k := range []ledger.ActionKind{ledger.ActionPropose, ledger.ActionApprove, ledger.ActionReject,
		ledger.ActionQuarantineLink, ledger.ActionQuarantineResolve, ledger.ActionFindingAcknowledge,
		ledger.ActionTokenCreate, ledger.ActionTokenRevoke, ledger.ActionCallbackSet, ledger.ActionCallbackRemove,
		ledger.ActionCallbackRetry, ledger.ActionEscalationNoticeRetry, "something.new"} {
		v := actionEvent(ledger.Action{Kind: k, At: now, Name: "Ada Owner", Role: "owner", Reason: "approved"}, now)
		if strings.Contains(v.Title, ".") || strings.Contains(v.Title, "_") || v.Title == "" {
			t.Errorf("%s titled %q", k, v.Title)
		}
		if v.By != "Ada Owner (owner)" {
			t.Errorf("%s by %q", k, v.By)
		}
	}
	if v := actionEvent(ledger.Action{Kind: ledger.ActionQuarantineResolve, At: now}, now); v.Title != "Dismissed an inbound event about this operation" {
		t.Errorf("dismissal titled %q", v.Title)
	}
}
